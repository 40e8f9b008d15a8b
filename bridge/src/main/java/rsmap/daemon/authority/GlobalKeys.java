// On an authority: its hosts' global parts of one job held to one group. The global part the authority's
// JobLifecycle asks, so that a host's JOB_START of a global map with same= and scope=job is pinned like a
// host's own maps are under JOB_KEY: the first host's part chooses, every later host's part is held to it.
package rsmap.daemon.authority;

import rsmap.alloc.Grant;
import rsmap.alloc.GroupKeys;
import rsmap.daemon.job.GlobalPart;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;
import rsmap.log.Log;
import rsmap.log.LogBook;

/**
 * docs/cluster.md, "One group for the whole job". The authority grants each host's global part as a job
 * of its own ({@code HOST:JOB}); {@code GroupAgreement} decides it as if alone, proposes its groups here,
 * and decides it again held to the job's recorded keys ({@link JobKeys#held}, the record JOB_KEY keeps,
 * forced before the answer). A part refused under them is counted out at once ({@link #end}): nothing
 * of it stays. Nothing beyond the authority is global: {@link #start} is never asked (its core holds
 * only the global maps). Called under the daemon's lock.
 */
public final class GlobalKeys implements GlobalPart {
    private final JobKeys keys;
    private final LogBook log;

    public GlobalKeys(JobKeys keys, LogBook log) {
        this.keys = keys;
        this.log = log;
    }

    /** {@code id} is {@code HOST:JOB[.TASK]}: the host is counted as holding job {@code JOB[.TASK]}'s keys. */
    @Override
    public GroupKeys groupKeys(JobId id, GroupKeys proposed) throws Refusal {
        return keys.held(id.host(), id, proposed);
    }

    @Override
    public boolean agreesGroups() {
        return true;
    }

    /** A host's part ended, or was refused after it proposed: the host holds the job's keys no more. */
    @Override
    public void end(JobId id) {
        try {
            keys.left(id.host(), id);
        } catch (Refusal e) {
            log.note(Log.Level.WARNING, "job " + id + ": " + e.getMessage() + " (the host is counted out of its groups"
                    + " at its next JOB_END or reconciliation)");
        }
    }

    @Override
    public Grant start(JobId id, String user, int slots, String request, Meanwhile meanwhile)
            throws Refusal {
        throw Refusal.refused("job " + id + ": " + request + " names no global map of this "
                + "authority");
    }
}
