// One unit property as systemd's manager takes it, the D-Bus struct (sv) of a name and a variant value,
// and the device properties rsmapd sets on a unit.
package rsmap.device.systemd;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.freedesktop.dbus.Struct;
import org.freedesktop.dbus.annotations.Position;
import org.freedesktop.dbus.types.Variant;
import rsmap.device.DevicePolicy;
import rsmap.device.DeviceRule;

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

    static UnitProperty devicePolicy(String policy) {
        return new UnitProperty("DevicePolicy", new Variant<>(policy));
    }

    /** DeviceAllow as a(ss): (path, rights) with rights r, w or rw, the modes of the devices characteristic. */
    static UnitProperty deviceAllow(List<DeviceRule> rules) {
        List<DeviceAccess> entries = new ArrayList<>();
        for (DeviceRule r : rules) {
            entries.add(new DeviceAccess(r.path(), r.mode().toString()));
        }
        return new UnitProperty("DeviceAllow", new Variant<>(entries, "a(ss)"));
    }

    /**
     * The device properties that replace whatever a unit had, for one SetUnitProperties call. The empty
     * DeviceAllow comes first: SetUnitProperties appends entries to the unit's list, and only an empty list
     * resets it (systemd.resource-control(5): "assigning the empty string resets the list"). Closed: then
     * {@code DevicePolicy=closed} and the policy's entries; open: {@code DevicePolicy=auto}, which with no
     * entries restricts nothing.
     */
    static List<UnitProperty> devices(DevicePolicy policy) {
        return policy.isOpen() ? List.of(deviceAllow(List.of()), devicePolicy("auto"))
                : List.of(deviceAllow(List.of()), devicePolicy("closed"), deviceAllow(policy.rules()));
    }
}
