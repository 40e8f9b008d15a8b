// A host's starts whose global part was not on disk when it stopped: what the authority says of them at
// the next connect settles them (the grant it holds is the job's; none: the start never completed).
package rsmap.daemon.link;

import java.util.Map;
import java.util.Optional;
import rsmap.alloc.Grant;
import rsmap.daemon.devices.HostDevices;
import rsmap.daemon.job.JobLifecycle;
import rsmap.daemon.records.JournalRecord;
import rsmap.daemon.records.Records;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.Refusal;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.daemon.state.JobId;

/** Only a host with an authority has them (JournalRecord.PENDING); the AuthorityLink's handshake asks. */
public final class PendingStarts {
    private final HostState s;
    private final Records records;
    private final JobLifecycle lifecycle;
    private final LogBook log;

    /** The held job's renderings follow its global part (its environment file, spec). */
    private final HostDevices devices;

    public PendingStarts(HostState s, HostDevices devices, Records records, JobLifecycle lifecycle, LogBook log) {
        this.s = s;
        this.devices = devices;
        this.records = records;
        this.lifecycle = lifecycle;
        this.log = log;
    }

    /**
     * What the authority said at a connect of the jobs whose global part this host did not have on disk:
     * a grant it holds is the job's (recorded, forced, its environment rewritten); none means the job's
     * start never completed (its JOB_START was not answered OK), and the job ends here. Under the daemon's lock.
     */
    public void resolve(Map<JobId, Optional<Grant>> said) {
        said.forEach((id, grant) -> {
            Job job = s.job(id).orElse(null);
            if (job == null || !s.isPending(id)) {
                return;
            }
            try {
                if (grant.isPresent()) {
                    Job now = job.withRemote(grant.get(), s.devices.environment(job.grant().plus(grant.get())));
                    records.write(new JournalRecord.Remote(id, grant.get()));
                    records.force();
                    s.confirmed(id);
                    devices.hold(now);
                    log.note(Log.Level.INFO, "job " + id + ": the authority holds its global part " + grant.get().byHost()
                            + ": restored");
                } else {
                    s.confirmed(id);
                    lifecycle.end(id, "its global part was never granted");
                    records.force();
                    log.note(Log.Level.WARNING, "job " + id + ": the authority holds no global part for it: its start"
                            + " never completed, its grant here is freed");
                }
            } catch (Refusal e) {
                log.note(Log.Level.ERROR, "job " + id + ": cannot resolve its global part now: " + e.getMessage());
            }
        });
    }
}
