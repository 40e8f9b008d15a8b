// An execution host's handler table: the common commands, and JOB_START and JOB_END of its own jobs
// (the global part, if any, asked of its GlobalPart); PLACE and the cluster's QUERY are refused here.
package rsmap.daemon;

import java.util.List;
import java.util.Map;
import java.util.Set;
import rsmap.daemon.job.FilterCheck;
import rsmap.daemon.job.GlobalPart;
import rsmap.daemon.job.JobAnswer;
import rsmap.daemon.job.JobLifecycle;
import rsmap.daemon.job.JobStartArgs;
import rsmap.daemon.job.StartAlternatives;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;
import rsmap.wire.Code;

/** docs/architecture.md, "Roles": what a host answers, never reaching the authority's rooms. */
final class HostCommands {
    private static final Set<String> JOB_KEYS = Set.of("job", "task");

    private HostCommands() {
    }

    static Commands.Table table(CommonCommands common, HostState s, JobLifecycle lifecycle, GlobalPart global) {
        Map<Code, Commands.Handler> h = common.table(state -> {
            throw Refusal.refused("QUERY of the cluster is the authority's (role = authority); "
                    + s.host() + " is an execution host");
        }, global);
        h.put(Code.JOB_START, (c, session) -> {
            JobStartArgs a = JobStartArgs.read(c, JobStartArgs.HOST_KEYS, JobId::of, s);
            // This host must pass the admin limit and the job's filter before anything is granted.
            FilterCheck.admit(s.config.filter(), a.filter(), s.node());
            if (a.onlyFilter()) { // only a filter: checked, nothing to grant (the starter enters it bare)
                return List.of(JobAnswer.of(c.tid(), Job.bare(a.id(), a.user())));
            }
            JobId id = a.id();
            Commands.present(session, Code.JOB_START, id);
            boolean fresh = !s.holds(id); // a retry answered with a held grant is never undone here
            return Commands.startedFor(session, lifecycle, id, fresh, a.alternatives().isEmpty()
                    ? lifecycle.start(c.tid(), a.id(), a.user(), a.request(), a.slots())
                    : StartAlternatives.start(lifecycle, s, c.tid(), a.id(), a.user(), a.slots(), a.alternatives()));
        });
        h.put(Code.JOB_END, (c, session) -> {
            lifecycle.end(JobId.of(Args.of(Code.JOB_END.name(), c, JOB_KEYS)), "epilog");
            return List.of();
        });
        // unavailable, not refused: a client that asks a host is set up wrong (job_submit.lua pointed at a
        // host's socket), not the job it asks for - job_submit.lua then accepts the job and logs this
        h.put(Code.PLACE, (c, session) -> {
            throw Refusal.unavailable("PLACE is the authority's (role = authority), which sees every "
                    + "registered host; " + s.host() + " is an execution host");
        });
        return new Commands.Table(h, Map.of(), common::closed);
    }
}
