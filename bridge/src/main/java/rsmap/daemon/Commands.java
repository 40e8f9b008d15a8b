// The commands of the agent protocol after INIT: one handler per command code, each with its argument
// checks next to it, under the daemon's lock.
package rsmap.daemon;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import rsmap.ParseException;
import rsmap.alloc.Explanation;
import rsmap.request.RequestList;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

/**
 * Seed 004's commands as docs/protocol.md lists them. Access is judged by {@link Access} before a
 * handler runs; a handler's failure is an ERROR whose reason is one line of at most {@link #MAX_REASON}
 * characters (hole 9), and changes nothing.
 */
final class Commands {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The longest ERROR reason rsmapd sends: one line, well inside any client's frame limit. */
    static final int MAX_REASON = 1024;
    private static final Pattern JOB = Pattern.compile("[A-Za-z0-9_+-]{1,100}");
    private static final Pattern TASK = Pattern.compile("[0-9]{1,10}");
    private static final Pattern USER = Pattern.compile("[A-Za-z0-9_.][A-Za-z0-9_.@$-]{0,63}");
    /** The keys each command's argument may carry (hole 9: anything else is an ERROR). */
    private static final Set<String> JOB_KEYS = Set.of("job", "task");
    private static final Set<String> START_KEYS = Set.of("job", "task", "user", "slots", "request", "filter",
            "alternatives");
    /** On an authority, a host's JOB_START and JOB_END name the host (issue 14). */
    private static final Set<String> AUTHORITY_JOB_KEYS = Set.of("host", "job", "task");
    private static final Set<String> AUTHORITY_START_KEYS = Set.of("host", "job", "task", "user", "slots", "request",
            "filter");
    private static final Set<String> QUERY_KEYS = Set.of("job", "task", "explain", "cluster");
    /** The release's why of a job whose start was undone because its client went away meanwhile. */
    static final String CLIENT_GONE = "client gone";

    /** One command's execution: the events before its OK. */
    private interface Handler {
        List<Frame> handle(Frame command, Session session) throws Session.CommandException;
    }

    private final HostState s;
    private final Access access;
    private final EventHub events;
    private final JobLifecycle lifecycle;
    private final Generations generations;
    private final Reallocation reallocation;
    /** The authority's room; null on a host. */
    private final Authority authority;
    private final Object lock;
    private final Map<Code, Handler> handlers = new EnumMap<>(Code.class);

    Commands(HostState s, Access access, EventHub events, JobLifecycle lifecycle, Generations generations,
             Reallocation reallocation, Authority authority, Object lock) {
        this.s = s;
        this.access = access;
        this.events = events;
        this.lifecycle = lifecycle;
        this.generations = generations;
        this.reallocation = reallocation;
        this.authority = authority;
        this.lock = lock;
        handlers.put(Code.MODEL_DEF, (c, session) -> {
            noArguments(c);
            List<Frame> model = Views.attributes(s, c.tid());
            if (authority != null) {
                model = new java.util.ArrayList<>(model);
                for (com.fasterxml.jackson.databind.node.ObjectNode e : authority.view.elements()) {
                    model.add(Frame.of(c.tid(), Code.ELEMENT_DEF.value(), e.toString()));
                }
            }
            return model;
        });
        handlers.put(Code.START_EVENTS, this::startEvents);
        handlers.put(Code.STOP_EVENTS, (c, session) -> {
            noArguments(c);
            if (!events.stop(session)) {
                throw new Session.CommandException("no event stream is open");
            }
            return List.of();
        });
        handlers.put(Code.LIST_FILTERS, this::listFilters);
        handlers.put(Code.SET_FILTERS, (c, session) -> {
            events.of(session).filters = EventHub.Filters.parse(Args.object(c)); // it checks its keys
            return List.of();
        });
        handlers.put(Code.QUERY, this::query);
        handlers.put(Code.JOB_START, (c, session) -> {
            Args a = Args.of(Code.JOB_START.name(), c, s.config.isAuthority() ? AUTHORITY_START_KEYS : START_KEYS);
            String id = hostJob(a);
            String request = a.string("request", "");
            int slots = a.integer("slots", 1, 1, 1_000_000);
            String user = a.string("user", "");
            var filter = FilterCheck.parse(a.string("filter", null), s.config.attributeTypes(), s.limits);
            List<String> alternatives = a.has("alternatives")
                    ? StartAlternatives.read(a.node().get("alternatives"), s) : List.of();
            if (!alternatives.isEmpty() && !request.isEmpty()) {
                throw new Session.CommandException("JOB_START takes \"request\" or \"alternatives\", not both");
            }
            if (request.isEmpty() && filter.isEmpty() && alternatives.isEmpty()) {
                throw new Session.CommandException("JOB_START needs \"request\"");
            }
            if (!user.isEmpty() && !USER.matcher(user).matches()) {
                throw new Session.CommandException("\"user\" is the job owner's name, not " + Args.quote(user));
            }
            // Issue 15: this host (on an authority: the requesting host, as it registered) must pass the
            // admin limit and the job's filter before anything is granted.
            var node = authority == null ? java.util.Optional.of(s.node())
                    : authority.view.node(a.string("host", ""), s.config.attributeTypes(), s.limits);
            if (node.isPresent()) {
                FilterCheck.admit(s.config.filter(), filter, node.get());
            }
            if (request.isEmpty() && alternatives.isEmpty()) { // only a filter: checked, nothing to grant
                return List.of(JobLifecycle.answer(c.tid(), Job.bare(id, user))); // (the starter enters it bare)
            }
            present(session, Code.JOB_START, id);
            boolean fresh = !s.jobs.containsKey(id); // a retry answered with a held grant is never undone here
            List<Frame> granted = alternatives.isEmpty() ? lifecycle.start(c.tid(), id, user, request, slots)
                    : StartAlternatives.start(lifecycle, s, c.tid(), id, user, slots, alternatives);
            if (fresh && session.gone()) { // it left while this start was decided: undone with its grant
                lifecycle.end(id, CLIENT_GONE);
                lifecycle.forced(); // the refusal below skips the group commit
                present(session, Code.JOB_START, id);
            }
            return granted;
        });
        handlers.put(Code.JOB_END, (c, session) -> {
            lifecycle.end(hostJob(Args.of(Code.JOB_END.name(), c, s.config.isAuthority() ? AUTHORITY_JOB_KEYS : JOB_KEYS)),
                    "epilog");
            return List.of();
        });
        handlers.put(Code.JOB_ENTER, (c, session) ->
                lifecycle.enter(c.tid(), jobId(Args.of(Code.JOB_ENTER.name(), c, JOB_KEYS)), session.peer()));
        handlers.put(Code.REALLOC, (c, session) -> {
            Args a = Args.of(Code.REALLOC.name(), c, ReallocArgs.REALLOC_KEYS);
            String id = jobId(a);
            String tag = ReallocArgs.tag(a, c.tid(), false);
            ReallocArgs.Read read = ReallocArgs.realloc(a, id, tag, s);
            reallocation.mayChange(id, session.peer(), Code.REALLOC);
            present(session, Code.REALLOC, id);
            return reallocation.realloc(c.tid(), session, read, id, tag);
        });
        handlers.put(Code.RELEASE, (c, session) -> {
            Args a = Args.of(Code.RELEASE.name(), c, ReallocArgs.RELEASE_KEYS);
            String id = jobId(a);
            var ids = ReallocArgs.released(a, s);
            reallocation.mayChange(id, session.peer(), Code.RELEASE);
            return reallocation.release(c.tid(), id, ids);
        });
        handlers.put(Code.REALLOC_CANCEL, (c, session) -> {
            Args a = Args.of(Code.REALLOC_CANCEL.name(), c, ReallocArgs.CANCEL_KEYS);
            String id = jobId(a);
            String tag = ReallocArgs.tag(a, c.tid(), true);
            reallocation.mayChange(id, session.peer(), Code.REALLOC_CANCEL);
            return reallocation.cancel(c.tid(), id, tag);
        });
        if (authority != null) {
            handlers.put(Code.REGISTER, authority::register);
            handlers.put(Code.HOST_EVENT, (c, session) -> authority.event(c));
            handlers.put(Code.RECONCILE, (c, session) -> authority.reconcile(c));
            handlers.put(Code.PLACE, (c, session) -> authority.placing.place(c));
        } else {
            handlers.put(Code.PLACE, (c, session) -> {
                throw new Session.CommandException("PLACE is the authority's (role = authority), which sees every "
                        + "registered host; " + s.host() + " is an execution host");
            });
        }
        handlers.put(Code.RELOAD, (c, session) -> {
            noArguments(c);
            return generations.reload(c.tid());
        });
    }

    /**
     * One command of one client; state changes are serialised under the daemon's lock. The whole state
     * as root or the admin sees it is kept, once built, until the next change: monitors that poll QUERY
     * are answered without the lock and never queue behind job starts.
     */
    List<Frame> handle(Code code, Frame command, Session session) throws Session.CommandException {
        String cached = s.stateCache;
        if (code == Code.QUERY && cached != null && command.args().isEmpty() && access.privileged(session.peer())
                && lifecycle.link == null) { // a link's state changes without the host's: never cached
            return List.of(Frame.of(command.tid(), Code.STATE.value(), cached));
        }
        Handler h = handlers.get(code);
        if (h == null) {
            throw new Session.CommandException(code + " is not a command of this daemon");
        }
        try {
            access.authorise(code, session.peer());
            List<Frame> answer;
            synchronized (lock) {
                answer = h.handle(command, session);
            }
            synced(); // group commit: the force runs outside the lock, the next commands decide meanwhile
            return answer;
        } catch (Session.CommandException e) {
            String reason = e.getMessage() == null ? code + " failed" : e.getMessage();
            if (reason.length() <= MAX_REASON && reason.indexOf('\n') < 0 && reason.indexOf('\r') < 0) {
                throw e;
            }
            throw new Session.CommandException(Args.oneLine(reason, MAX_REASON));
        }
    }

    /**
     * A client gone before its JOB_START or REALLOC is decided gets nothing (a prolog that gave up
     * waiting has already told execd to reschedule the job): refused, nothing changed. A JOB_START
     * granted while its client went away is ended at once (why {@value #CLIENT_GONE}), in the same
     * force as its grant.
     */
    private static void present(Session session, Code code, String id) throws Session.CommandException {
        if (session.gone()) {
            String why = code.name() + " of job " + id + ": the client closed its connection before it was decided;"
                    + " nothing granted";
            Log.write(Log.Level.INFO, why); // its ERROR reaches no one
            throw new Session.CommandException(why);
        }
    }

    /** Forces what the commands wrote to the journal before their answers (JobLifecycle.forced). */
    void synced() {
        lifecycle.forced();
    }

    /** The session ended: its stream goes. */
    void closed(Session session) {
        synchronized (lock) {
            events.stop(session);
            events.forget(session);
            reallocation.closed(session);
            if (authority != null) {
                authority.closed(session);
            }
        }
    }

    private List<Frame> startEvents(Frame c, Session session) throws Session.CommandException {
        noArguments(c);
        EventHub.Stream stream = events.of(session);
        if (stream.tid != null) {
            throw new Session.CommandException("an event stream is already open (TID " + Long.toHexString(stream.tid)
                    + "); STOP_EVENTS first");
        }
        stream.tid = c.tid();
        session.post(Frame.of(c.tid(), Code.STATE.value(), Views.state(s, access, session.peer(), stream.filters, null)
                .toString()), true);
        session.keepOpen();
        return List.of();
    }

    private List<Frame> listFilters(Frame c, Session session) throws Session.CommandException {
        noArguments(c);
        ObjectNode f = JSON.createObjectNode();
        events.of(session).filters.toJson(f.putObject("filters"));
        ObjectNode keys = f.putObject("keys");
        s.mapNames().forEach(keys.putArray("map")::add);
        keys.put("job", "job identifiers (7, or 7.3 for an array task; 7 also matches its tasks)");
        keys.put("user", "user names");
        EventHub.KINDS.forEach(keys.putArray("event")::add);
        return List.of(Frame.of(c.tid(), Code.FILTERS.value(), f.toString()));
    }

    private List<Frame> query(Frame c, Session session) throws Session.CommandException {
        Session.Peer peer = session.peer();
        Args a = Args.optional(Code.QUERY.name(), c, QUERY_KEYS);
        String job = a.has("job") ? jobId(a) : null;
        String explain = a.string("explain", null);
        if (job != null && !s.jobs.containsKey(job)) {
            throw new Session.CommandException("job " + job + " holds nothing on " + s.host());
        }
        if (job != null && !access.mayQuery(peer, s.jobs.get(job))) {
            throw new Session.CommandException("job " + job + " is not yours, '" + peer.user() + "'");
        }
        ObjectNode state = Views.state(s, access, peer, EventHub.Filters.NONE, job);
        if (a.has("cluster") && !a.node().get("cluster").isBoolean()) {
            throw new Session.CommandException("QUERY: \"cluster\" is true or false");
        }
        if (a.has("cluster") && a.node().get("cluster").booleanValue()) {
            if (authority == null) {
                throw new Session.CommandException("QUERY of the cluster is the authority's (role = authority); "
                        + s.host() + " is an execution host");
            }
            authority.cluster(state);
        }
        if (explain != null) {
            state.set("explain", explain(explain, peer));
        }
        if (lifecycle.link != null) {
            state.set("authority", lifecycle.link.view()); // issue 14: the host's link to its authority
        }
        String text = state.toString();
        if (c.args().isEmpty() && access.privileged(peer)) {
            s.stateCache = text;
        }
        return List.of(Frame.of(c.tid(), Code.STATE.value(), text));
    }

    /**
     * Why a request could or could not start on this host now, instance by instance; a job owner sees
     * other users' jobs as {@value Views#OTHER}, as QUERY shows them (hole 7).
     */
    private ObjectNode explain(String request, Session.Peer peer) throws Session.CommandException {
        RequestList parsed;
        try {
            parsed = RequestList.parse(request, s.table, s.limits);
        } catch (ParseException e) {
            throw new Session.CommandException("explain: " + e.getMessage());
        }
        Explanation x = s.cluster.explain(parsed, s.host());
        if (!access.privileged(peer)) {
            x = masked(x, peer);
        }
        return JSON.createObjectNode().put("request", request).put("can_start", x.canStart()).put("text", x.toHuman());
    }

    private Explanation masked(Explanation x, Session.Peer peer) {
        List<Explanation.MapReport> maps = new ArrayList<>();
        for (Explanation.MapReport m : x.maps()) {
            List<Explanation.InstanceReport> instances = new ArrayList<>();
            for (Explanation.InstanceReport i : m.instances()) {
                String why = i.why();
                if (i.state().equals("held") && why.startsWith("by job ")) {
                    Job holder = s.jobs.get(why.substring("by job ".length()));
                    if (holder == null || !access.mayQuery(peer, holder)) {
                        why = "by job " + Views.OTHER;
                    }
                }
                instances.add(new Explanation.InstanceReport(i.index(), i.id(), i.state(), why));
            }
            maps.add(new Explanation.MapReport(m.map(), m.pool(), m.needed(), m.same(), instances, m.groups(),
                    m.canStart(), m.verdict()));
        }
        return new Explanation(x.host(), x.canStart(), maps);
    }

    private static void noArguments(Frame command) throws Session.CommandException {
        if (!command.args().isEmpty()) {
            throw new Session.CommandException("expected no argument, got " + command.args().size());
        }
    }

    /** JOB_START's and JOB_END's job: on an authority always of a host (HOST:JOB). */
    private String hostJob(Args a) throws Session.CommandException {
        if (s.config.isAuthority() && !a.has("host")) {
            throw new Session.CommandException("an authority grants jobs of hosts: name the job's \"host\"");
        }
        return jobId(a);
    }

    /** The job a command names: JOB or JOB.TASK, and on an authority HOST:JOB[.TASK] of its "host". */
    private static String jobId(Args a) throws Session.CommandException {
        String host = a.string("host", null);
        if (host != null && !Config.HOST.matcher(host).matches()) {
            throw new Session.CommandException("\"host\" is a host name, not " + Args.quote(host));
        }
        String local = localJobId(a);
        return host == null ? local : host + ":" + local;
    }

    private static String localJobId(Args a) throws Session.CommandException {
        String job = a.string("job", "");
        if (!JOB.matcher(job).matches()) {
            throw new Session.CommandException("\"job\" is missing or not a job id: " + Args.quote(job));
        }
        String task = a.string("task", "");
        if (!task.isEmpty() && !task.equals("undefined") && !TASK.matcher(task).matches()) {
            throw new Session.CommandException("\"task\" is a task number or \"undefined\", not " + Args.quote(task));
        }
        return task.isEmpty() || task.equals("undefined") ? job : job + "." + task;
    }
}
