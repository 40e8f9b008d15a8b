// One allowed device of a closed policy: a path, the device number it resolves to, and the access mode.
package rsmap.device;

import java.util.Objects;
import rsmap.map.DeviceList;

/**
 * An allowed device: the path as configured, its type ({@code 'c'} character, {@code 'b'} block) and
 * device number after following symlinks, and the widest mode granted for it.
 */
public record DeviceRule(String path, char type, int major, int minor, DeviceList.Mode mode) {
    public DeviceRule {
        Objects.requireNonNull(path);
        Objects.requireNonNull(mode);
        if (type != 'c' && type != 'b') {
            throw new IllegalArgumentException("device type is c or b, not " + type);
        }
    }

    /** The cgroup v1 {@code devices.allow} line: {@code c 195:0 rw}. */
    public String cgroupV1() {
        return type + " " + major + ":" + minor + " " + mode;
    }

    /** The systemd {@code DeviceAllow=} value: {@code /dev/nvidia0 rw}. */
    public String systemd() {
        return path + " " + mode;
    }
}
