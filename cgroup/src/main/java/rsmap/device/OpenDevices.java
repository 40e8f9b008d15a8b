// Which of a job's processes still hold a device node open: asked before a RELEASE narrows the policy.
package rsmap.device;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.map.Instance;

/**
 * Issue 13: a job gives back instances with RELEASE; a process of the job that still has one of their
 * device nodes open would keep using a device that is about to go to another job (a closed device
 * policy checks {@code open(2)}, not file descriptors opened before). How it tells: every process of the
 * job it can see - the processes the starter entered and their descendants ({@link ProcessHandle}) -
 * has its {@code /proc/PID/fd/*} links followed; a character or block device whose number (unix:rdev)
 * is one of the released devices is a holder. Which processes: with a backend that lists the processes
 * of the job's cgroup ({@link #holderIn}), every one of them, whichever process tree it left (double fork,
 * {@code setsid}); otherwise ({@link #holder}) the processes the starter entered and their descendants.
 * What it cannot see: descriptors passed to a process outside the job; and as a user other than root,
 * other users' {@code /proc/PID/fd}.
 */
public final class OpenDevices {
    private static final Path PROC = Path.of("/proc");

    private OpenDevices() {
    }

    /**
     * The devices of {@code released} that {@code kept} (what the job goes on using) and the basic devices
     * do not list: what the job gives up.
     */
    public static List<DeviceRule> givenUp(List<Instance> released, List<Instance> kept) {
        Set<String> still = new LinkedHashSet<>(DevicePolicy.BASICS);
        for (DeviceRule r : DevicePolicy.of(kept, false).rules()) {
            still.add(r.type() + " " + r.major() + ":" + r.minor());
        }
        List<DeviceRule> out = new ArrayList<>();
        for (DeviceRule r : DevicePolicy.of(released, false).rules()) {
            if (!still.contains(r.path()) && !still.contains(r.type() + " " + r.major() + ":" + r.minor())) {
                out.add(r);
            }
        }
        return out;
    }

    /**
     * The first process among {@code pids} (pid to its start, {@code Instant.EPOCH} unknown) and their
     * descendants that holds one of {@code devices} open, said in words; empty when none does (or none
     * can be seen).
     */
    public static Optional<String> holder(Collection<Long> pids, List<DeviceRule> devices) {
        if (devices.isEmpty()) {
            return Optional.empty();
        }
        Set<Long> all = new LinkedHashSet<>();
        for (long pid : pids) {
            ProcessHandle.of(pid).ifPresent(p -> {
                all.add(p.pid());
                p.descendants().forEach(d -> all.add(d.pid()));
            });
        }
        for (long pid : all) {
            Optional<String> held = holds(pid, devices);
            if (held.isPresent()) {
                return held;
            }
        }
        return Optional.empty();
    }

    /** Where the processes of a job are listed: {@link DeviceBackend#processes}, read again on each call. */
    public interface Listing {
        List<Long> now() throws DevicePolicyException;
    }

    /** How many times the job's process list is read before a job that keeps forking is called unsettled. */
    static final int ROUNDS = 50;

    /**
     * The first process of the job's cgroup that holds one of {@code devices} open, said in words. Asked
     * after the policy no longer lets the job open them, so no descriptor appears after it was looked for;
     * the list is read until a reading names no process not yet looked at, since a process may fork with
     * the descriptor and close its own before it is looked at (the child was listed by the next reading).
     * A job whose list still grows after {@value #ROUNDS} readings is reported as a holder: it cannot be
     * told not to be one.
     */
    public static Optional<String> holderIn(Listing listing, List<DeviceRule> devices) throws DevicePolicyException {
        if (devices.isEmpty()) {
            return Optional.empty();
        }
        Set<Long> seen = new LinkedHashSet<>();
        for (int round = 0; round < ROUNDS; round++) {
            boolean fresh = false;
            for (long pid : listing.now()) {
                if (seen.add(pid)) {
                    fresh = true;
                    Optional<String> held = holds(pid, devices);
                    if (held.isPresent()) {
                        return held;
                    }
                }
            }
            if (!fresh) {
                return Optional.empty();
            }
        }
        return Optional.of("the job's processes kept changing over " + ROUNDS + " readings of its cgroup ("
                + seen.size() + " processes)");
    }

    /** Whether process {@code pid} has one of {@code devices} open, named; unreadable fds are passed over. */
    static Optional<String> holds(long pid, List<DeviceRule> devices) {
        Path fds = PROC.resolve(Long.toString(pid)).resolve("fd");
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(fds)) {
            for (Path fd : dir) {
                Map<String, Object> a;
                try {
                    a = Files.readAttributes(fd, "unix:mode,rdev"); // follows the link to the node
                } catch (IOException | UnsupportedOperationException e) {
                    continue; // closed meanwhile, a socket or pipe, or not ours to read
                }
                int mode = (Integer) a.get("mode");
                char type = (mode & 0170000) == 0020000 ? 'c' : (mode & 0170000) == 0060000 ? 'b' : 0;
                if (type == 0) {
                    continue;
                }
                long rdev = (Long) a.get("rdev");
                for (DeviceRule r : devices) {
                    if (r.type() == type && r.major() == DevicePolicy.major(rdev) && r.minor() == DevicePolicy.minor(rdev)) {
                        return Optional.of("process " + pid + " still holds " + r.path() + " (" + type + " "
                                + r.major() + ":" + r.minor() + ") open on descriptor " + fd.getFileName());
                    }
                }
            }
        } catch (IOException e) {
            return Optional.empty(); // gone, or not ours to see
        }
        return Optional.empty();
    }
}
