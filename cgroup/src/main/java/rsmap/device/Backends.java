// Chooses the device backend from configuration: systemd, cgroup-v1, dry-run, or auto-detection.
package rsmap.device;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;
import rsmap.device.systemd.SystemdBackend;
import rsmap.device.v1.CgroupV1Backend;

/**
 * {@code backend = auto | systemd | cgroup-v1 | dry-run}. {@code auto} takes systemd where PID 1 is
 * systemd and its Manager answers (cgroup v2 hosts, where systemd owns the device programs), else the
 * cgroup v1 devices controller where it is mounted, and otherwise refuses with both reasons: silently
 * enforcing nothing is what dry-run is for. A backend named explicitly is checked the same way and
 * refused with its reason.
 */
public final class Backends {
    public static final List<String> NAMES = List.of("auto", "systemd", "cgroup-v1", "dry-run");

    private Backends() {
    }

    public static DeviceBackend choose(String name) throws DevicePolicyException {
        return choose(name, () -> SystemdBackend.systemBus(), () -> new CgroupV1Backend(CgroupV1Backend.DEFAULT_ROOT),
                Path.of("/proc/1/comm"));
    }

    /** The same with the candidates given, for tests. */
    static DeviceBackend choose(String name, Supplier<DeviceBackend> systemd, Supplier<DeviceBackend> v1, Path pid1)
            throws DevicePolicyException {
        switch (name) {
            case "dry-run":
                return new DryRunBackend();
            case "cgroup-v1":
                return proven(v1.get());
            case "systemd":
                return proven(systemd.get());
            case "auto":
                String why;
                if (isSystemd(pid1)) {
                    DeviceBackend s = systemd.get();
                    DeviceBackend.Availability a = s.availability();
                    if (a.available()) {
                        return s;
                    }
                    why = "systemd: " + a.reason();
                } else {
                    why = "systemd: PID 1 is not systemd";
                }
                DeviceBackend c = v1.get();
                DeviceBackend.Availability a = c.availability();
                if (a.available()) {
                    return c;
                }
                throw new DevicePolicyException("no device backend can enforce isolation here (" + why + "; cgroup-v1: "
                        + a.reason() + "); choose backend=dry-run or isolation=optional to run without it");
            default:
                throw new DevicePolicyException("unknown device backend '" + name + "' (" + String.join(", ", NAMES) + ")");
        }
    }

    /**
     * A backend named explicitly proves it can enforce, as one chosen by auto does: a
     * cgroup-v1 backend on plain files would report every policy applied while the job reaches every
     * device. dry-run needs no proof: it is the admin's own choice not to enforce.
     */
    private static DeviceBackend proven(DeviceBackend b) throws DevicePolicyException {
        DeviceBackend.Availability a = b.availability();
        if (!a.available()) {
            if (b instanceof SystemdBackend) {
                ((SystemdBackend) b).close(); // its D-Bus connection, if it got one
            }
            throw new DevicePolicyException(b.name() + " cannot enforce device isolation here: " + a.reason());
        }
        return b;
    }

    private static boolean isSystemd(Path pid1) {
        try {
            return Files.readString(pid1).strip().equals("systemd");
        } catch (IOException e) {
            return false;
        }
    }
}
