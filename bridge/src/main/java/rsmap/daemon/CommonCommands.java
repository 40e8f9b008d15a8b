// The commands every daemon answers whatever its role: the model, event streams and their filters,
// QUERY, JOB_ENTER, the reallocation commands and RELOAD.
package rsmap.daemon;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import rsmap.ParseException;
import rsmap.alloc.Explanation;
import rsmap.daemon.health.Health;
import rsmap.daemon.job.EventHub;
import rsmap.daemon.job.Generations;
import rsmap.daemon.job.GlobalPart;
import rsmap.daemon.job.JobLifecycle;
import rsmap.daemon.job.ReallocArgs;
import rsmap.daemon.job.Reallocation;
import rsmap.daemon.job.Views;
import rsmap.daemon.state.Access;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;
import rsmap.request.RequestList;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

/**
 * A role's table ({@link HostCommands}, {@link AuthorityCommands}) starts from {@link #table} and adds or
 * replaces its own handlers; QUERY asks the role for what only it knows ({@link ClusterQuery}) and the
 * host's {@link GlobalPart} for its view.
 */
final class CommonCommands {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> JOB_KEYS = Set.of("job", "task");
    private static final Set<String> QUERY_KEYS = Set.of("job", "task", "explain", "cluster");

    /** QUERY with {@code "cluster":true}: the role's whole cluster, or its refusal. */
    interface ClusterQuery {
        void add(ObjectNode state) throws Refusal;
    }

    private final HostState s;
    private final Access access;
    private final EventHub events;
    private final JobLifecycle lifecycle;
    private final Generations generations;
    private final Reallocation reallocation;
    private final Health health;

    CommonCommands(HostState s, Access access, EventHub events, JobLifecycle lifecycle, Generations generations,
                   Reallocation reallocation, Health health) {
        this.health = health;
        this.s = s;
        this.access = access;
        this.events = events;
        this.lifecycle = lifecycle;
        this.generations = generations;
        this.reallocation = reallocation;
    }

    /** The handlers of every role; QUERY adds {@code cluster}'s part and {@code global}'s view. */
    Map<Code, Commands.Handler> table(ClusterQuery cluster, GlobalPart global) {
        Map<Code, Commands.Handler> h = new EnumMap<>(Code.class);
        h.put(Code.MODEL_DEF, (c, session) -> {
            Commands.noArguments(c);
            return Views.attributes(s, c.tid());
        });
        h.put(Code.START_EVENTS, this::startEvents);
        h.put(Code.STOP_EVENTS, (c, session) -> {
            Commands.noArguments(c);
            if (!events.stop(session)) {
                throw Refusal.refused("no event stream is open");
            }
            return List.of();
        });
        h.put(Code.LIST_FILTERS, this::listFilters);
        h.put(Code.SET_FILTERS, (c, session) -> {
            events.of(session).filters = EventHub.Filters.parse(Args.object(c)); // it checks its keys
            return List.of();
        });
        h.put(Code.QUERY, (c, session) -> query(c, session, cluster, global));
        DrainCommands.add(h, health, s); // docs/health.md
        h.put(Code.JOB_ENTER, (c, session) ->
                lifecycle.enter(c.tid(), JobId.of(Args.of(Code.JOB_ENTER.name(), c, JOB_KEYS)), session.peer()));
        h.put(Code.REALLOC, (c, session) -> {
            Args a = Args.of(Code.REALLOC.name(), c, ReallocArgs.REALLOC_KEYS);
            JobId id = JobId.of(a);
            String tag = ReallocArgs.tag(a, c.tid(), false);
            ReallocArgs.Read read = ReallocArgs.realloc(a, id, tag, s);
            reallocation.mayChange(id, session.peer(), Code.REALLOC);
            Commands.present(session, Code.REALLOC, id);
            return reallocation.realloc(c.tid(), session, read, id, tag);
        });
        h.put(Code.RELEASE, (c, session) -> {
            Args a = Args.of(Code.RELEASE.name(), c, ReallocArgs.RELEASE_KEYS);
            JobId id = JobId.of(a);
            var ids = ReallocArgs.released(a, s);
            reallocation.mayChange(id, session.peer(), Code.RELEASE);
            return reallocation.release(c.tid(), id, ids);
        });
        h.put(Code.REALLOC_CANCEL, (c, session) -> {
            Args a = Args.of(Code.REALLOC_CANCEL.name(), c, ReallocArgs.CANCEL_KEYS);
            JobId id = JobId.of(a);
            String tag = ReallocArgs.tag(a, c.tid(), true);
            reallocation.mayChange(id, session.peer(), Code.REALLOC_CANCEL);
            return reallocation.cancel(c.tid(), id, tag);
        });
        h.put(Code.RELOAD, (c, session) -> {
            Commands.noArguments(c);
            return generations.reload(c.tid());
        });
        return h;
    }

    /** A session ended: its stream and its waiting reallocs go. */
    void closed(Session session) {
        events.stop(session);
        events.forget(session);
        reallocation.closed(session);
    }

    private List<Frame> startEvents(Frame c, Session session) throws Refusal {
        Commands.noArguments(c);
        EventHub.Stream stream = events.of(session);
        if (stream.tid != null) {
            throw Refusal.refused("an event stream is already open (TID " + Long.toHexString(stream.tid)
                    + "); STOP_EVENTS first");
        }
        stream.tid = c.tid();
        session.post(Frame.of(c.tid(), Code.STATE.value(), Views.state(s, access, session.peer(), stream.filters, null)
                .toString()), true);
        session.keepOpen();
        return List.of();
    }

    private List<Frame> listFilters(Frame c, Session session) throws Refusal {
        Commands.noArguments(c);
        ObjectNode f = JSON.createObjectNode();
        events.of(session).filters.toJson(f.putObject("filters"));
        ObjectNode keys = f.putObject("keys");
        s.mapNames().forEach(keys.putArray("map")::add);
        keys.put("job", "job identifiers (7, or 7.3 for an array task; 7 also matches its tasks)");
        keys.put("user", "user names");
        EventHub.KINDS.forEach(keys.putArray("event")::add);
        return List.of(Frame.of(c.tid(), Code.FILTERS.value(), f.toString()));
    }

    private List<Frame> query(Frame c, Session session, ClusterQuery cluster, GlobalPart global)
            throws Refusal {
        Session.Peer peer = session.peer();
        Args a = Args.optional(Code.QUERY.name(), c, QUERY_KEYS);
        JobId job = a.has("job") ? JobId.of(a) : null;
        String explain = a.string("explain", null);
        if (job != null && s.job(job).isEmpty()) {
            throw Refusal.refused("job " + job + " holds nothing on " + s.host());
        }
        if (job != null && !access.mayQuery(peer, s.job(job).get())) {
            throw Refusal.denied("job " + job + " is not yours, '" + peer.user() + "'");
        }
        ObjectNode state = Views.state(s, access, peer, EventHub.Filters.NONE, job);
        if (a.has("cluster") && !a.node().get("cluster").isBoolean()) {
            throw Refusal.malformed("QUERY: \"cluster\" is true or false");
        }
        if (a.has("cluster") && a.node().get("cluster").booleanValue()) {
            cluster.add(state);
        }
        if (explain != null) {
            state.set("explain", explain(explain, peer));
        }
        global.view().ifPresent(v -> state.set("authority", v)); // the host's link to its authority
        String text = state.toString();
        if (Commands.wholeState(c) && global.cacheable()) { // kept for this viewer until the next change (Commands#quick)
            s.cacheState(access.privileged(peer) ? null : peer.user(), text);
        }
        return List.of(Frame.of(c.tid(), Code.STATE.value(), text));
    }

    /**
     * Why a request could or could not start on this host now, instance by instance; a job owner sees
     * other users' jobs as {@value Views#OTHER}, as QUERY shows them.
     */
    private ObjectNode explain(String request, Session.Peer peer) throws Refusal {
        RequestList parsed;
        try {
            parsed = RequestList.parse(request, s.table, s.limits);
        } catch (ParseException e) {
            throw Refusal.refused("explain: " + e.getMessage());
        }
        Explanation x = s.cluster().explain(parsed, s.host());
        if (!access.privileged(peer)) {
            x = masked(x, peer);
        }
        return JSON.createObjectNode().put("request", request).put("can_start", x.canStart()).put("text", x.toHuman()
                + s.devices.explainSlices(s.health, s.cluster().hosts().get(s.host()), parsed,
                s.cluster().instances(s.host()), job -> shown(peer, job)));
    }

    /** A job's id as {@code peer} may see it: its own, or "other" (as QUERY masks them). */
    private String shown(Session.Peer peer, String job) {
        return access.privileged(peer) || JobId.parse(job).flatMap(s::job).filter(j -> access.mayQuery(peer, j)).isPresent() ? job : Views.OTHER;
    }

    private Explanation masked(Explanation x, Session.Peer peer) {
        List<Explanation.MapReport> maps = new ArrayList<>();
        for (Explanation.MapReport m : x.maps()) {
            List<Explanation.InstanceReport> instances = new ArrayList<>();
            for (Explanation.InstanceReport i : m.instances()) {
                // the holder the reason names, by the core's data: another's job shows as other (as QUERY masks it)
                boolean hidden = !i.job().isEmpty() && !shown(peer, i.job()).equals(i.job());
                instances.add(hidden ? i.withWhy(i.why().replace("job " + i.job(), "job " + Views.OTHER)) : i);
            }
            maps.add(new Explanation.MapReport(m.map(), m.pool(), m.needed(), m.same(), instances, m.groups(),
                    m.canStart(), m.verdict()));
        }
        return new Explanation(x.host(), x.canStart(), maps);
    }
}
