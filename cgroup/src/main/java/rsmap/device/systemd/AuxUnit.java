// An auxiliary unit of StartTransientUnit: the D-Bus struct (sa(sv)); rsmapd sends none, the signature needs it.
package rsmap.device.systemd;

import java.util.List;
import java.util.Objects;
import org.freedesktop.dbus.Struct;
import org.freedesktop.dbus.annotations.Position;

/** An {@code (sa(sv))} entry: a unit name and its properties. */
public final class AuxUnit extends Struct {
    @Position(0)
    private final String name;
    @Position(1)
    private final List<UnitProperty> properties;

    public AuxUnit(String name, List<UnitProperty> properties) {
        this.name = Objects.requireNonNull(name);
        this.properties = List.copyOf(properties);
    }

    public String getName() {
        return name;
    }

    public List<UnitProperty> getProperties() {
        return properties;
    }
}
