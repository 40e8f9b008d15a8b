// The authority's handler table: the common commands, the hosts' JOB_START and JOB_END of global maps
// (each naming its host), REGISTER, HOST_EVENT, RECONCILE, PLACE, and the cluster in MODEL_DEF and QUERY.
package rsmap.daemon;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import rsmap.daemon.authority.Authority;
import rsmap.daemon.authority.JobKeys;
import rsmap.daemon.authority.Lease;
import rsmap.daemon.authority.PlaceLane;
import rsmap.daemon.authority.Standby;
import rsmap.daemon.job.FilterCheck;
import rsmap.daemon.job.GlobalPart;
import rsmap.daemon.job.JobAnswer;
import rsmap.daemon.job.JobLifecycle;
import rsmap.daemon.job.JobStartArgs;
import rsmap.daemon.job.Views;
import rsmap.daemon.state.Access;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.JobId;
import rsmap.wire.Code;
import rsmap.wire.Frame;

/** docs/architecture.md, "Roles": what only an authority answers, never reaching a host's rooms. */
final class AuthorityCommands {
    /** A host's JOB_END names the host. */
    private static final Set<String> JOB_KEYS = Set.of("host", "job", "task");

    private AuthorityCommands() {
    }

    static Commands.Table table(CommonCommands common, HostState s, JobLifecycle lifecycle, Authority authority,
                                JobKeys keys, Access access, Object lock, Lease lease) {
        Map<Code, Commands.Handler> h = common.table(state -> Standby.active(authority.cluster(state).set("job_keys",
                keys.view()), lease),
                GlobalPart.NONE);
        h.put(Code.MODEL_DEF, (c, session) -> {
            Commands.noArguments(c);
            List<Frame> model = new ArrayList<>(Views.attributes(s, c.tid()));
            for (ObjectNode e : authority.view.elements()) {
                model.add(Frame.of(c.tid(), Code.ELEMENT_DEF.value(), e.toString()));
            }
            return model;
        });
        h.put(Code.JOB_START, (c, session) -> {
            JobStartArgs a = JobStartArgs.read(c, JobStartArgs.AUTHORITY_KEYS, JobId::ofHost, s);
            // The requesting host, as it registered, must pass the admin limit and the job's filter.
            var node = authority.view.node(a.id().host(), s.config.attributeTypes(), s.limits);
            if (node.isPresent()) {
                FilterCheck.admit(s.config.filter(), a.filter(), node.get());
            }
            if (a.onlyFilter()) {
                return List.of(JobAnswer.of(c.tid(), Job.bare(a.id(), a.user())));
            }
            JobId id = a.id();
            Commands.present(session, Code.JOB_START, id);
            boolean fresh = !s.holds(id); // a retry answered with a held grant is never undone here
            return Commands.startedFor(session, lifecycle, id, fresh,
                    lifecycle.start(c.tid(), a.id(), a.user(), a.request(), a.slots()));
        });
        h.put(Code.JOB_END, (c, session) -> {
            JobId id = JobId.ofHost(Args.of(Code.JOB_END.name(), c, JOB_KEYS));
            lifecycle.end(id, "epilog");
            keys.left(id.host(), id); // the host's part of a job held to scope=job groups ended
            return List.of();
        });
        h.put(Code.JOB_KEY, (c, session) -> keys.ask(c));
        h.put(Code.REGISTER, authority::register);
        h.put(Code.HOST_EVENT, (c, session) -> authority.event(c));
        h.put(Code.RECONCILE, (c, session) -> {
            Set<JobId> keyed = JobKeys.listed(c); // checked before anything changes
            String host = Args.object(c).path("host").asText();
            List<Frame> answer;
            keys.spare(host, keyed); // a global part freed here leaves the host in the groups its own maps hold
            try {
                answer = authority.reconcile(c);
            } finally {
                keys.spare(null, Set.of());
            }
            keys.reconciled(host, keyed);
            return answer;
        });
        PlaceLane lane = new PlaceLane(authority.placing, access, lock);
        Map<Code, Commands.Handler> outsideLock = Map.of(Code.PLACE, (c, session) -> lane.place(c, session.peer()));
        return new Commands.Table(h, outsideLock, session -> {
            common.closed(session);
            authority.closed(session);
        });
    }
}
