// Job end never widens: processes a job leaves in its cgroup at JOB_END stay under a closed policy that
// grants no device until they exit (docs/isolation.md, "Processes left at job end").
package rsmap.daemon.devices;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import rsmap.daemon.state.HostState;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;
import rsmap.device.Isolation;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.daemon.state.JobId;

/**
 * At JOB_END the job's instances go back to the pool; a process of the job the batch system did not kill
 * (double fork, {@code setsid}) must not keep reaching them, nor be moved out of its cgroup to where every
 * device is reachable. So the policy is removed only when the backend lists no process in the job's cgroup;
 * otherwise it is brought to a closed policy granting no device (the basic devices only) and set aside
 * under the name {@code <job>.ended-<n>} (cgroup v1: the cgroup renamed), so that the same job name
 * starting again (a process that entered a job id before its JOB_START) gets a fresh policy that never
 * holds them. It is listed in {@link HostState#leftovers} (shown by {@code rsmap status}) until a later look
 * finds it empty: at every JOB_END and every reconciliation. A backend that cannot list a job's processes
 * (systemd: stopping the transient scope ends its processes) removes the policy as before. Under the
 * daemon's lock.
 */
final class Leftovers {
    private final HostState s;
    private final Isolation isolation;
    private final LogBook log;

    Leftovers(HostState s, Isolation isolation, LogBook log) {
        this.s = s;
        this.isolation = isolation;
        this.log = log;
    }

    /** The policy of job {@code id}, which ended: removed when nothing is left in it, else closed and kept. */
    void ended(JobId job) {
        String id = job.toString(); // the policy's name
        sweep();
        List<Long> left;
        try {
            left = isolation.processes(id).orElse(List.of());
        } catch (DevicePolicyException e) {
            // Failing closed: a cgroup that cannot be read is not emptied into the root cgroup.
            log.note(Log.Level.ERROR, "job " + id + ": its processes cannot be listed, its device policy is kept"
                    + " closed: " + e.getMessage());
            close(id, List.of());
            return;
        }
        if (left.isEmpty()) {
            remove(id);
            return;
        }
        close(id, left);
    }

    /**
     * At start: the policies an earlier run set aside ({@code <job>.ended-<n>}) are listed again, so that
     * they are shown and removed once empty like this run's; those empty already are removed now. One that
     * cannot be read stays as it is, closed. Never a running job's own policy (a name the journal holds).
     */
    void adopt() {
        List<String> names;
        try {
            names = isolation.setAsideNames();
        } catch (DevicePolicyException e) {
            log.note(Log.Level.WARNING, "the device policies set aside by an earlier run cannot be listed; they stay"
                    + " closed and in place: " + e.getMessage());
            return;
        }
        for (String name : names) {
            if (JobId.parse(name).filter(j -> s.holds(j) || s.bare.of(j).isPresent()).isPresent()) {
                continue;
            }
            s.leftover(name, List.of()); // looked at by the sweep below, with this run's own
        }
        if (!s.leftovers().isEmpty()) {
            sweep();
            s.leftovers().forEach((name, pids) -> log.note(Log.Level.WARNING, "job " + name + " (set aside by an "
                    + "earlier run): processes " + pids + " left in its cgroup stay under a closed policy granting no"
                    + " device until they exit"));
        }
    }

    /** Removes the policies of ended jobs whose last process has exited; refreshes the rest's processes. */
    void sweep() {
        for (Map.Entry<String, List<Long>> e : s.leftovers().entrySet()) {
            if (JobId.parse(e.getKey()).filter(s::holds).isPresent()) {
                s.leftoverGone(e.getKey()); // started again under the same name: its cgroup is the job's, looked at its end
                continue;
            }
            try {
                List<Long> left = isolation.processes(e.getKey()).orElse(List.of());
                if (left.isEmpty()) {
                    s.leftoverGone(e.getKey());
                    remove(e.getKey());
                    log.note(Log.Level.INFO, "job " + e.getKey() + ": its last process left at job end has exited;"
                            + " its device policy is removed");
                } else {
                    s.leftover(e.getKey(), left);
                }
            } catch (DevicePolicyException ex) {
                log.note(Log.Level.WARNING, "job " + e.getKey() + ": its processes left at job end cannot be listed: "
                        + ex.getMessage());
            }
        }
    }

    private void close(String id, List<Long> left) {
        String name = id;
        try {
            isolation.update(id, DevicePolicy.of(List.of(), true)).ifPresent(w -> log.note(Log.Level.WARNING, w));
            name = aside(id);
            log.note(Log.Level.WARNING, "job " + id + " ended with " + left.size() + " processes left in its cgroup "
                    + new ArrayList<>(left) + ": they stay under a closed policy granting no device until they exit"
                    + (name.equals(id) ? "" : " (as " + name + ")"));
        } catch (DevicePolicyException e) {
            log.note(Log.Level.ERROR, "job " + id + ": " + left.size() + " processes left in its cgroup " + left
                    + " could not be closed off every device, its last policy stays: " + e.getMessage());
        }
        s.leftover(name, left);
    }

    /** The name the closed policy of {@code id} goes on under: {@code <id>.ended-<n>}, or {@code id} itself. */
    private String aside(String id) {
        for (int n = 1; n <= 100; n++) {
            String as = id + ".ended-" + n;
            try {
                return isolation.setAside(id, as) ? as : id;
            } catch (DevicePolicyException e) {
                // taken (an earlier job's leftovers): the next number
            }
        }
        return id;
    }

    private void remove(String id) {
        try {
            isolation.remove(id);
        } catch (DevicePolicyException e) {
            log.note(Log.Level.ERROR, "job " + id + ": removing its device policy: " + e.getMessage());
        }
    }
}
