// One DeviceAllow= entry as systemd's manager takes it: the D-Bus struct (ss), a device path and its rights.
package rsmap.device.systemd;

import java.util.Objects;
import org.freedesktop.dbus.Struct;
import org.freedesktop.dbus.annotations.Position;

/** An {@code (ss)} entry of {@code DeviceAllow}: a path and rights {@code r}, {@code w} or {@code rw}. */
public final class DeviceAccess extends Struct {
    @Position(0)
    private final String path;
    @Position(1)
    private final String rights;

    public DeviceAccess(String path, String rights) {
        this.path = Objects.requireNonNull(path);
        this.rights = Objects.requireNonNull(rights);
    }

    public String getPath() {
        return path;
    }

    public String getRights() {
        return rights;
    }
}
