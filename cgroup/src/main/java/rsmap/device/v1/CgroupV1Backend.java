// Device isolation with the cgroup v1 devices controller: one cgroup per job under <root>/rsmap.
package rsmap.device.v1;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import rsmap.device.DeviceBackend;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;

/**
 * A closed policy is a cgroup {@code <root>/rsmap/<job>}: {@code a} written to {@code devices.deny},
 * then one {@code devices.allow} line per device, then the job's processes moved in through
 * {@code cgroup.procs}. A later task of the job (the Slurm plugin enters each task) finds the cgroup
 * there and joins it: its list is brought to the policy without ever holding less than both (see
 * {@link DevicesList#towards}), and a failure leaves the cgroup and the processes already in it as they
 * were. {@link #update} brings the list of the running job's cgroup to the new policy the same way; the
 * cgroup itself is the record of a closed policy, so an update works after a restart of rsmapd too. An
 * update to an open policy allows every device but keeps the cgroup and its processes, so a later update
 * can close it again. Removing it moves any process left back to the root cgroup and removes the
 * directory. Every control file gets one write per line, as the kernel expects.
 */
public final class CgroupV1Backend implements DeviceBackend {
    /** Where distributions mount the v1 devices controller. */
    public static final Path DEFAULT_ROOT = Path.of("/sys/fs/cgroup/devices");
    private static final Pattern JOB = Pattern.compile("[A-Za-z0-9_.-]{1,200}");
    /** The name a job's policy is set aside under (Leftovers): {@code <job>.ended-<n>}. */
    private static final Pattern SET_ASIDE = Pattern.compile("[A-Za-z0-9_.-]{1,190}\\.ended-[1-9][0-9]{0,2}");

    /** The mount table of the daemon's own mount namespace. */
    public static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

    private final Path root;
    private final Path base;
    private final Path mountinfo;
    /**
     * The jobs applied an open policy, which have no cgroup (their processes were not moved): an update
     * keeps them open or refuses to close them. In memory only, until {@link #remove}.
     */
    private final Set<String> openJobs = ConcurrentHashMap.newKeySet();

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
     * The root must be a mounted cgroup v1 hierarchy that binds the devices controller:
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
            openJobs.add(job);
            return; // Grid Engine's RSMAP manual: a job that does not request the map is not restricted by it
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
            // a new cgroup starts as its parent, which allows everything
            bring(dir, created ? DevicesList.ALLOW_ALL : DevicesList.read(dir), policy);
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
     * the job's cgroup, with the processes in it and those they start, goes to {@code policy}
     * through the writes of {@link DevicesList#towards}, which read what the cgroup allows now; a job
     * applied an open policy (no cgroup) stays open, and is refused a closed one.
     */
    @Override
    public void update(String job, DevicePolicy policy) throws DevicePolicyException {
        Path dir = cgroupOf(job);
        if (!Files.isDirectory(dir)) {
            if (!openJobs.contains(job)) {
                throw DevicePolicyException.noPolicy(job);
            }
            if (!policy.isOpen()) {
                throw DevicePolicyException.openCannotClose(job);
            }
            return;
        }
        try {
            bring(dir, DevicesList.read(dir), policy);
        } catch (NoSuchFileException e) {
            throw DevicePolicyException.noPolicy(job); // removed meanwhile
        } catch (IOException e) {
            throw new DevicePolicyException("cannot update the device policy of job " + job + " in " + dir + ": " + e, e);
        }
    }

    /** Writes what takes the cgroup {@code dir}, listing {@code listed}, to {@code policy}. */
    private static void bring(Path dir, DevicesList listed, DevicePolicy policy) throws IOException {
        for (DevicesList.Write w : listed.towards(policy)) {
            write(dir.resolve(w.file()), w.line());
        }
    }

    /** The pids listed in the job's {@code cgroup.procs}; none when it has no cgroup (open or removed). */
    @Override
    public Optional<List<Long>> processes(String job) throws DevicePolicyException {
        Path dir = cgroupOf(job);
        try {
            List<Long> pids = new ArrayList<>();
            for (String line : Files.readAllLines(dir.resolve("cgroup.procs"), StandardCharsets.US_ASCII)) {
                if (!line.isBlank()) {
                    pids.add(Long.parseLong(line.strip()));
                }
            }
            return Optional.of(pids);
        } catch (NoSuchFileException e) {
            return Optional.of(List.of());
        } catch (IOException | NumberFormatException e) {
            throw new DevicePolicyException("cannot list the processes of job " + job + " in " + dir + ": " + e, e);
        }
    }

    /** Renames the job's cgroup (cgroup v1 allows a rename within the same parent); its processes stay in it. */
    @Override
    public boolean setAside(String job, String as) throws DevicePolicyException {
        Path dir = cgroupOf(job);
        Path to = cgroupOf(as);
        try {
            Files.move(dir, to);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            throw new DevicePolicyException("cannot rename the device cgroup " + dir + " of job " + job + " to " + to
                    + ": " + e, e);
        }
    }

    /** The cgroups under {@code <root>/rsmap} named {@code <job>.ended-<n>}: set aside, by this run or an earlier. */
    @Override
    public List<String> setAsideNames() throws DevicePolicyException {
        List<String> names = new ArrayList<>();
        try (var dirs = Files.newDirectoryStream(base, p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS))) {
            for (Path p : dirs) {
                String name = p.getFileName().toString();
                if (SET_ASIDE.matcher(name).matches()) {
                    names.add(name);
                }
            }
        } catch (NoSuchFileException e) {
            return List.of(); // no job had a closed policy yet
        } catch (IOException e) {
            throw new DevicePolicyException("cannot list the device cgroups in " + base + ": " + e, e);
        }
        return names;
    }

    @Override
    public void remove(String job) throws DevicePolicyException {
        openJobs.remove(job);
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
