// RELEASE narrows first, then looks (docs/realloc.md): the job's policy loses what it gives back, then every
// process in its cgroup is looked at for a descriptor still open on it; a holder widens the policy back.
package rsmap.daemon.devices;

import java.util.List;
import java.util.Optional;
import rsmap.alloc.Grant;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.Refusal;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;
import rsmap.device.DeviceRule;
import rsmap.device.Isolation;
import rsmap.device.OpenDevices;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.map.Instance;

/**
 * From the narrowing on no process of the job can open what it gives back, so a descriptor found was opened
 * before, and one closed and opened again in between is not missed. Which processes: the backend's list of
 * the job's cgroup ({@link OpenDevices#holderIn}: double-forked and {@code setsid} ones too), or where the
 * backend cannot list them, the entered processes and their descendants. Under the daemon's lock.
 */
final class ReleaseNarrowing {
    private final HostState s;
    private final Isolation isolation;
    private final LogBook log;
    /** The instances behind a job's grant, with their slices' nodes ({@link HostDevices#instances(Job)}). */
    private final java.util.function.Function<Job, List<rsmap.map.Instance>> holding;

    ReleaseNarrowing(HostState s, Isolation isolation, LogBook log,
                     java.util.function.Function<Job, List<rsmap.map.Instance>> holding) {
        this.s = s;
        this.isolation = isolation;
        this.log = log;
        this.holding = holding;
    }

    /**
     * Narrows {@code job}'s policy to {@code kept}, then refuses, its policy widened back and nothing else
     * changed, when a process of it still holds a device of {@code released} that {@code kept} lacks.
     */
    void narrow(Job job, Grant ids, List<Instance> released, List<Instance> kept) throws Refusal {
        String id = job.id().toString(); // the policy's name
        List<DeviceRule> givenUp = OpenDevices.givenUp(released, kept);
        boolean narrowed = false;
        if (!job.pids().isEmpty()) {
            try {
                isolation.update(id, DevicePolicy.of(kept, s.devicesListed())).ifPresent(w -> log.note(Log.Level.WARNING, w));
                narrowed = true;
            } catch (DevicePolicyException e) {
                widenBack(job);
                throw Refusal.unavailable("job " + id + ": its device policy cannot be narrowed: " + e.getMessage());
            }
        }
        Optional<String> holder;
        try {
            holder = isolation.processes(id).isPresent()
                    ? OpenDevices.holderIn(() -> isolation.processes(id).orElse(List.of()), givenUp)
                    : OpenDevices.holder(job.pids().keySet(), givenUp);
        } catch (DevicePolicyException e) {
            holder = Optional.of("its processes cannot be listed: " + e.getMessage());
        }
        if (holder.isPresent()) {
            if (narrowed) {
                widenBack(job);
            }
            throw Refusal.busy("job " + id + " cannot release " + ids.byHost() + ": " + holder.get()
                    + "; close it first");
        }
    }

    /** A refused RELEASE: the job's policy goes back to everything it still holds, releasing included. */
    void widenBack(Job job) {
        if (job.pids().isEmpty()) {
            return;
        }
        try {
            isolation.update(job.id().toString(), DevicePolicy.of(holding.apply(job), s.devicesListed()))
                    .ifPresent(w -> log.note(Log.Level.WARNING, w));
        } catch (DevicePolicyException e) {
            // Failing closed: the job keeps the instances but cannot open what it was to give back.
            log.note(Log.Level.ERROR, "job " + job.id() + ": its device policy could not be widened back after a"
                    + " refused RELEASE: " + e.getMessage());
        }
    }
}
