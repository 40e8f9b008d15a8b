// Jobs that hold nothing here but whose processes entered (the starter enters every job): under a closed
// policy with no granted device until JOB_END or reconciliation ends them.
package rsmap.daemon.state;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Kept beside the jobs that hold grants ({@link HostState}), read and changed under the daemon's lock. Not
 * journaled: after a restart a JOB_END still removes the policy by the job's name.
 */
public final class BareJobs {
    private final Map<JobId, Job> byId = new LinkedHashMap<>();

    /** Job {@code id}, if it holds nothing here but its processes entered. */
    public Optional<Job> of(JobId id) {
        return Optional.ofNullable(byId.get(id));
    }

    /** Every such job, in the order they entered (a view). */
    public Collection<Job> all() {
        return Collections.unmodifiableCollection(byId.values());
    }

    /** {@code job}'s processes entered (again): it is kept with them. */
    public void entered(Job job) {
        byId.put(job.id(), job);
    }

    public void drop(JobId id) {
        byId.remove(id);
    }
}
