// The device policy of a job on a host, computed from the devices characteristic of its grant.
package rsmap.device;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.ParseException;
import rsmap.complex.Value;
import rsmap.map.DeviceList;
import rsmap.map.Instance;

/**
 * Grid Engine's RSMAP manual, "DEVICE ISOLATION": as soon as any device is allowed for a job the policy is closed: the
 * job reaches the devices of the instances it was granted on the host (the widest mode where a path is
 * granted twice) plus /dev/null, /dev/zero, /dev/full, /dev/random and /dev/urandom, and nothing else.
 * the fail-closed job path (which wins over the seed's "a job that does not request the resource map is not restricted
 * by it"): on a host whose maps list devices at all, every job runs under a closed policy, also one
 * granted nothing here ({@link #of(List, boolean)}), as flux-core's gpubind hides every GPU from a job
 * granted none; only hosts whose maps list no devices leave jobs unrestricted ({@link #isOpen()}).
 * Paths are resolved to device numbers following symlinks; a listed path that does not exist is
 * reported in {@link #missing()} and left out, never widened to a wildcard.
 */
public record DevicePolicy(boolean closed, List<DeviceRule> rules, List<String> missing) {
    /** The devices every closed policy allows (Grid Engine's RSMAP manual), read and write as systemd's closed policy does. */
    public static final List<String> BASICS = List.of("/dev/null", "/dev/zero", "/dev/full", "/dev/random",
            "/dev/urandom");

    public static final DevicePolicy OPEN = new DevicePolicy(false, List.of(), List.of());

    public DevicePolicy {
        rules = List.copyOf(rules);
        missing = List.copyOf(missing);
    }

    public boolean isOpen() {
        return !closed;
    }

    /**
     * The policy for the instances granted to a job on one host. The devices values were checked when the
     * host configuration was read, so a parse error here is a programming error.
     */
    public static DevicePolicy of(List<Instance> granted) {
        return of(granted, false);
    }

    /**
     * The same, closed even where the grant lists no device when {@code hostListsDevices}: a job that
     * holds nothing with devices then reaches only the basic devices.
     */
    public static DevicePolicy of(List<Instance> granted, boolean hostListsDevices) {
        Map<String, DeviceList.Mode> paths = new LinkedHashMap<>();
        for (Instance i : granted) {
            Optional<Value> devices = i.characteristics().get(DeviceList.CHARACTERISTIC);
            if (devices.isEmpty()) {
                continue;
            }
            try {
                for (DeviceList.Device d : DeviceList.parse(devices.get().text()).devices()) {
                    paths.merge(d.path(), d.mode(), DeviceList.Mode::widen);
                }
            } catch (ParseException e) {
                throw new IllegalStateException("devices of " + i.id() + " were accepted when read: " + e.getMessage(), e);
            }
        }
        if (paths.isEmpty() && !hostListsDevices) {
            return OPEN;
        }
        for (String basic : BASICS) {
            paths.merge(basic, DeviceList.Mode.RW, DeviceList.Mode::widen);
        }
        List<DeviceRule> rules = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        paths.forEach((path, mode) -> {
            Optional<DeviceRule> rule = resolve(path, mode);
            if (rule.isPresent()) {
                rules.add(rule.get());
            } else {
                missing.add(path);
            }
        });
        return new DevicePolicy(true, rules, missing);
    }

    /** Whether any instance of these hosts' maps lists devices: then every job's policy is closed. */
    public static boolean listsDevices(java.util.Collection<rsmap.map.ComplexValues> hosts) {
        for (rsmap.map.ComplexValues v : hosts) {
            for (rsmap.map.ResourceMap rm : v.resourceMaps()) {
                for (Instance i : rm.instances()) {
                    if (i.characteristics().get(DeviceList.CHARACTERISTIC).isPresent()) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** The device a path names, following symlinks; empty where it does not exist or is no device. */
    public static Optional<DeviceRule> resolve(String path, DeviceList.Mode mode) {
        try {
            Path real = Path.of(path).toRealPath();
            int fileMode = (Integer) Files.getAttribute(real, "unix:mode");
            char type;
            switch (fileMode & 0170000) {
                case 0020000:
                    type = 'c';
                    break;
                case 0060000:
                    type = 'b';
                    break;
                default:
                    return Optional.empty();
            }
            long rdev = (Long) Files.getAttribute(real, "unix:rdev");
            return Optional.of(new DeviceRule(path, type, major(rdev), minor(rdev), mode));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
        }
    }

    /** glibc's gnu_dev_major: bits 8-19 and 32-43 of the 64-bit dev_t. */
    static int major(long dev) {
        return (int) (((dev >>> 32) & 0xfffff000L) | ((dev >>> 8) & 0x00000fffL));
    }

    /** glibc's gnu_dev_minor: bits 0-7 and 20-31. */
    static int minor(long dev) {
        return (int) (((dev >>> 12) & 0xffffff00L) | (dev & 0x000000ffL));
    }

    /** systemd properties: DevicePolicy=closed and one DeviceAllow= per device (nothing when open). */
    public List<String> systemdLines() {
        List<String> out = new ArrayList<>();
        if (closed) {
            out.add("DevicePolicy=closed");
            rules.forEach(r -> out.add("DeviceAllow=" + r.systemd()));
        }
        return out;
    }

    /** cgroup v1 lines: "a" to devices.deny, then one devices.allow line per device (nothing when open). */
    public List<String> cgroupV1Lines() {
        List<String> out = new ArrayList<>();
        if (closed) {
            out.add("devices.deny a");
            rules.forEach(r -> out.add("devices.allow " + r.cgroupV1()));
        }
        return out;
    }
}
