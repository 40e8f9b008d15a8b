// One unit property as systemd's manager takes it: the D-Bus struct (sv), a name and a variant value.
package rsmap.device.systemd;

import java.util.Objects;
import org.freedesktop.dbus.Struct;
import org.freedesktop.dbus.annotations.Position;
import org.freedesktop.dbus.types.Variant;

/**
 * A {@code (sv)} entry of an {@code a(sv)} property list. Build list values with an explicit signature
 * ({@code new Variant<>(list, "a(ss)")}): dbus-java cannot infer a container signature from an erased
 * {@code List}.
 */
public final class UnitProperty extends Struct {
    @Position(0)
    private final String name;
    @Position(1)
    private final Variant<?> value;

    public UnitProperty(String name, Variant<?> value) {
        this.name = Objects.requireNonNull(name);
        this.value = Objects.requireNonNull(value);
    }

    public String getName() {
        return name;
    }

    public Variant<?> getValue() {
        return value;
    }
}
