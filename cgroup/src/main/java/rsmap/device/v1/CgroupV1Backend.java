// Device isolation with the cgroup v1 devices controller: one cgroup per job under <root>/rsmap.
package rsmap.device.v1;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import rsmap.device.DeviceBackend;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;
import rsmap.device.DeviceRule;

/**
 * A closed policy is a cgroup {@code <root>/rsmap/<job>}: {@code a} written to {@code devices.deny},
 * then one {@code devices.allow} line per device, then the job's processes moved in through
 * {@code cgroup.procs}. A later task of the job (the Slurm plugin enters each task) finds the cgroup
 * there and joins it: its list is brought to the policy without ever holding less than both (see
 * {@link #update}), and a failure leaves the cgroup and the processes already in it as they were.
 * Removing it moves any process left back to the root cgroup and removes the directory. Every control
 * file gets one write per line, as the kernel expects.
 */
public final class CgroupV1Backend implements DeviceBackend {
    /** Where distributions mount the v1 devices controller. */
    public static final Path DEFAULT_ROOT = Path.of("/sys/fs/cgroup/devices");
    /** devices.list's entry of a cgroup that allows everything ({@code a *:* rwm}). */
    private static final String ALL = "a *:*";
    private static final Pattern JOB = Pattern.compile("[A-Za-z0-9_.-]{1,200}");

    /** The mount table of the daemon's own mount namespace. */
    public static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

    private final Path root;
    private final Path base;
    private final Path mountinfo;

    public CgroupV1Backend(Path root) {
        this(root, MOUNTINFO);
    }

    /** The same, reading the mount table from {@code mountinfo} (tests give a crafted one). */
    public CgroupV1Backend(Path root, Path mountinfo) {
        this.root = root;
        this.base = root.resolve("rsmap");
        this.mountinfo = mountinfo;
    }

    @Override
    public String name() {
        return "cgroup-v1";
    }

    /**
     * The root must be a mounted cgroup v1 hierarchy that binds the devices controller (issue 11, hole 3):
     * the kernel enforces nothing written to plain files, so a tmpfs over the root, a hierarchy of other
     * controllers, or cgroup v2 cannot enforce a policy, whatever files they hold. The mount the kernel
     * resolves the root to decides (the innermost visible one), then cgroup.procs must be writable.
     */
    @Override
    public Availability availability() {
        Path real;
        try {
            real = root.toRealPath();
        } catch (IOException e) {
            return Availability.no(root + " does not exist: no cgroup v1 devices hierarchy");
        }
        Optional<Mounts.Mount> on;
        try {
            on = Mounts.read(mountinfo).of(real);
        } catch (IOException e) {
            return Availability.no("cannot read the mount table " + mountinfo + ": " + e.getMessage());
        }
        if (on.isEmpty()) {
            return Availability.no(real + " is on no mount listed in " + mountinfo);
        }
        Mounts.Mount m = on.get();
        String where = real + (real.equals(m.point()) ? "" : " (on " + m.point() + ")");
        if (m.type().equals("cgroup2")) {
            return Availability.no(where + " is the cgroup v2 hierarchy, which has no devices files: use"
                    + " device_backend = systemd");
        }
        if (!m.type().equals("cgroup")) {
            return Availability.no(where + " is a " + m.type() + " mount, not a cgroup v1 hierarchy of the devices"
                    + " controller: the kernel would enforce nothing written there");
        }
        if (!m.superOptions().contains("devices")) {
            return Availability.no(where + " is a cgroup v1 hierarchy without the devices controller ("
                    + String.join(",", m.superOptions()) + ")");
        }
        if (!Files.isWritable(real.resolve("cgroup.procs"))) {
            return Availability.no(real + "/cgroup.procs is not writable (rsmapd must run as root)");
        }
        return Availability.yes();
    }

    /** The cgroup directory of a job. */
    public Path cgroupOf(String job) throws DevicePolicyException {
        if (!JOB.matcher(job).matches() || job.equals(".") || job.equals("..")) {
            throw new DevicePolicyException("job name '" + job + "' cannot name a cgroup (letters, digits, . _ -)");
        }
        return base.resolve(job);
    }

    @Override
    public void apply(String job, DevicePolicy policy, long... pids) throws DevicePolicyException {
        if (policy.isOpen()) {
            return; // seed 002: a job that does not request the map is not restricted by it
        }
        Path dir = cgroupOf(job);
        boolean created = false;
        try {
            if (!Files.isDirectory(base)) {
                Files.createDirectories(base);
            }
            if (!Files.isDirectory(dir)) {
                Files.createDirectory(dir);
                created = true;
            }
            Map<String, String> listed = created ? Map.of() : listed(dir);
            if (created || listed.containsKey(ALL)) {
                write(dir.resolve("devices.deny"), "a");
                for (DeviceRule r : policy.rules()) {
                    write(dir.resolve("devices.allow"), r.cgroupV1());
                }
            } else {
                update(dir, listed, policy);
            }
            for (long pid : pids) {
                write(dir.resolve("cgroup.procs"), Long.toString(pid));
            }
        } catch (IOException e) {
            if (created) {
                try {
                    remove(job);
                } catch (DevicePolicyException ignored) {
                    // the first failure is the one to report
                }
            }
            // A cgroup this call did not create holds the job's running tasks: removing it would move them
            // to the root cgroup, where they reach every device. It stays, and so do they.
            throw new DevicePolicyException("cannot apply the device policy of job " + job + " in " + dir + ": " + e, e);
        }
    }

    /**
     * Brings the list of a job's existing cgroup to {@code policy} while its tasks run: first every
     * device of the policy is allowed (the kernel merges an allow into an existing entry), then each access
     * the cgroup lists beyond the policy is denied (in a deny-by-default cgroup a deny line takes those
     * rights off the entry). Writing {@code a} to devices.deny would empty the list first, and a running
     * task opening /dev/null at that moment would get EPERM.
     */
    private static void update(Path dir, Map<String, String> listed, DevicePolicy policy) throws IOException {
        Map<String, String> wanted = new HashMap<>();
        for (DeviceRule r : policy.rules()) {
            write(dir.resolve("devices.allow"), r.cgroupV1());
            wanted.merge(r.type() + " " + r.major() + ":" + r.minor(), r.mode().toString(), String::concat);
        }
        for (Map.Entry<String, String> e : listed.entrySet()) {
            String keep = wanted.getOrDefault(e.getKey(), "");
            StringBuilder extra = new StringBuilder();
            for (char c : e.getValue().toCharArray()) {
                if (keep.indexOf(c) < 0) {
                    extra.append(c);
                }
            }
            if (extra.length() > 0) {
                write(dir.resolve("devices.deny"), e.getKey() + " " + extra);
            }
        }
    }

    /** devices.list as entry ({@code c 195:0}, {@code a *:*}) to access ({@code rwm}). */
    private static Map<String, String> listed(Path dir) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : Files.readAllLines(dir.resolve("devices.list"), StandardCharsets.US_ASCII)) {
            String[] f = line.strip().split(" ");
            if (f.length == 3) {
                out.merge(f[0] + " " + f[1], f[2], String::concat);
            }
        }
        return out;
    }

    @Override
    public void remove(String job) throws DevicePolicyException {
        Path dir = cgroupOf(job);
        if (!Files.isDirectory(dir)) {
            return;
        }
        try {
            List<String> left = Files.readAllLines(dir.resolve("cgroup.procs"), StandardCharsets.US_ASCII);
            for (String pid : left) {
                if (!pid.isBlank()) {
                    try {
                        write(root.resolve("cgroup.procs"), pid.trim());
                    } catch (IOException gone) {
                        // the process ended meanwhile
                    }
                }
            }
            Files.delete(dir);
        } catch (NoSuchFileException e) {
            // removed concurrently: nothing left to do
        } catch (IOException e) {
            throw new DevicePolicyException("cannot remove the device cgroup " + dir + " of job " + job + ": " + e, e);
        }
    }

    private static void write(Path file, String line) throws IOException {
        Files.write(file, line.getBytes(StandardCharsets.US_ASCII));
    }
}
