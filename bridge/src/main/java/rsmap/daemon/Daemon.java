// rsmapd's core: the allocation state of this host, kept in the journal, served over the agent protocol.
package rsmap.daemon;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Decision;
import rsmap.alloc.Explanation;
import rsmap.alloc.Grant;
import rsmap.alloc.JobSpec;
import rsmap.complex.ComplexTable;
import rsmap.device.Backends;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;
import rsmap.device.Isolation;
import rsmap.device.JobCgroups;
import rsmap.journal.Journal;
import rsmap.map.ComplexValues;
import rsmap.map.Instance;
import rsmap.map.ResourceMap;
import rsmap.request.RequestList;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.PeerCredentials;
import rsmap.wire.Session;
import rsmap.wire.SocketServer;

/**
 * The daemon of one execution host (issue 5). JOB_START grants the job's instances on this host and
 * JOB_END gives them back; both are in the journal, forced to disk, before the answer goes out. The
 * journal keeps grants, not decisions: start-up restores each running job's exact grant under the
 * configuration generation it was made in, then compacts the journal to that state. Commands are
 * executed one at a time on the state; the socket serves clients concurrently.
 */
public final class Daemon implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** What a job, an array task and a job owner may be named (compiled once: every job start checks). */
    private static final java.util.regex.Pattern JOB = java.util.regex.Pattern.compile("[A-Za-z0-9_+-]{1,100}");
    private static final java.util.regex.Pattern TASK = java.util.regex.Pattern.compile("[0-9]{1,10}");
    private static final java.util.regex.Pattern USER =
            java.util.regex.Pattern.compile("[A-Za-z0-9_.][A-Za-z0-9_.@$-]{0,63}");

    /** A job holding instances here: who owns it, what it asked for, what it got, where it runs. */
    record Job(String id, String user, String request, int slots, Grant grant, Map<String, String> env,
               Map<Long, Instant> pids) {
        /** Unknown start time of an entered process (pid reuse then cannot be told apart). */
        static final Instant UNKNOWN = Instant.EPOCH;

        Job {
            pids = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(pids));
        }

        /** One more process entered the job (a job may run several steps, each entering); exited ones drop out. */
        Job withPid(long p, Instant start) {
            Map<Long, Instant> next = new LinkedHashMap<>();
            pids.forEach((pid, t) -> {
                if (alive(pid, t)) {
                    next.put(pid, t);
                }
            });
            next.put(p, start == null ? UNKNOWN : start);
            return new Job(id, user, request, slots, grant, env, next);
        }

        Job withEnv(Map<String, String> e) {
            return new Job(id, user, request, slots, grant, e, pids);
        }

        /** The same process as entered: alive, and started when it was then (not a reused pid). */
        static boolean alive(long pid, Instant start) {
            Optional<ProcessHandle> p = ProcessHandle.of(pid);
            return p.isPresent() && p.get().isAlive() && (start.equals(UNKNOWN)
                    || p.get().info().startInstant().map(start::equals).orElse(true));
        }

        Set<String> maps() {
            Set<String> maps = new LinkedHashSet<>();
            grant.byHost().values().forEach(m -> maps.addAll(m.keySet()));
            return maps;
        }
    }

    private final Config config;
    private final Path configFile;
    private final ComplexTable table;
    private final Limits limits;
    private final Journal journal;
    private final Isolation isolation;
    private final EventHub events = new EventHub();
    private final Map<String, Job> jobs = new LinkedHashMap<>();
    /** Requests already parsed against this table (immutable values), by their text. */
    private final Map<String, RequestList> parsedRequests = new java.util.HashMap<>();
    private final Map<String, ComplexValues> parsedValues = new java.util.HashMap<>();
    /** The latest lines logged, for tests and the demo; bounded, a daemon runs for months. */
    private final java.util.ArrayDeque<String> log = new java.util.ArrayDeque<>();
    private static final int LOG_KEPT = 1000;
    private Cluster cluster;
    /** QUERY's answer for root and the admin, null after any change (see {@link #handle}). */
    private volatile String stateCache;
    private String hostValues;
    private String globalValues;
    private long generation;
    private SocketServer server;
    private ScheduledExecutorService timer;

    /** Builds the state from the configuration and the journal. */
    public Daemon(Config config, ComplexTable table) throws ParseException, IOException {
        this(config, table, null);
    }

    /**
     * The same, remembering the file the configuration came from for RELOAD ({@code null}: RELOAD
     * is refused).
     */
    public Daemon(Config config, ComplexTable table, Path configFile) throws ParseException, IOException {
        this.config = config;
        this.configFile = configFile;
        this.table = table;
        this.limits = Limits.DEFAULT.withMaxRsmapIds(config.maxRsmapIds());
        Isolation iso;
        try {
            iso = new Isolation(Backends.choose(config.deviceBackend()), config.isolation());
        } catch (DevicePolicyException e) {
            if (config.isolation() == Isolation.Mode.REQUIRED) {
                throw new IOException("device_backend: " + e.getMessage(), e);
            }
            note(Log.Level.WARNING, "device isolation is NOT enforced (isolation=optional): " + e.getMessage());
            iso = new Isolation(new rsmap.device.DryRunBackend(), Isolation.Mode.OPTIONAL);
        }
        this.isolation = iso;
        String fileHost = config.complexValues();
        String fileGlobal = config.globalComplexValues();
        checkValues(fileHost, fileGlobal);
        this.journal = Journal.open(config.stateDir().resolve("journal"));
        replay();
        boolean reconfigured = false;
        if (generation == 0) {
            cluster = build(fileHost, fileGlobal);
            generation = 1;
            hostValues = fileHost;
            globalValues = fileGlobal;
        } else if (!fileHost.equals(hostValues) || !fileGlobal.equals(globalValues)) {
            try {
                reconfigure(fileHost, fileGlobal);
                reconfigured = true; // the journal's earlier configuration is superseded
                note(Log.Level.INFO, "configuration changed since the last run: now generation " + generation);
            } catch (Session.CommandException e) {
                note(Log.Level.WARNING, "keeping configuration generation " + generation + " of the journal: "
                        + e.getMessage());
            }
        }
        // Compaction: only when the journal holds more than one configuration and the held grants (one
        // record each); any end, enter or earlier configuration makes it longer.
        if (journal.replayed().size() != 1 + jobs.size() || reconfigured) {
            journal.compact(snapshot());
        }
    }

    /** complex_values that do not parse stop the daemon with the file, the line and the reason. */
    private void checkValues(String host, String global) throws IOException {
        String file = configFile == null ? "rsmapd.conf" : configFile.toString();
        for (String key : List.of("complex_values", "global_complex_values")) {
            try {
                values(key.equals("complex_values") ? host : global);
            } catch (ParseException e) {
                throw new IOException(file + ": line " + config.lineOf(key) + ": " + key + ": " + e.getMessage(), e);
            }
        }
    }

    /** Starts serving on the configured socket, and reconciling every {@code reconcile_interval}. */
    public Daemon serve() throws IOException {
        server = new SocketServer(config.socket(), () -> new Session.Handler() {
            @Override
            public List<Frame> handle(Code code, Frame command, Session session) throws Session.CommandException {
                return Daemon.this.handle(code, command, session);
            }

            @Override
            public void closed(Session session) {
                Daemon.this.closed(session);
            }
        }, config.maxFrame(), groupIfExists(config.socketGroup()), config.socketMode());
        reconcile();
        if (config.reconcileInterval() > 0) {
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "rsmapd-reconcile");
                t.setDaemon(true);
                return t;
            });
            timer.scheduleWithFixedDelay(this::reconcile, config.reconcileInterval(), config.reconcileInterval(),
                    TimeUnit.SECONDS);
        }
        return this;
    }

    private static String groupIfExists(String group) {
        try {
            Path p = Path.of("/etc/group");
            if (Files.isReadable(p) && Files.readAllLines(p).stream().anyMatch(l -> l.startsWith(group + ":"))) {
                return group;
            }
        } catch (IOException e) {
            // no group database: leave the socket's group as it is
        }
        return "";
    }

    public synchronized Cluster cluster() {
        return cluster;
    }

    /** The latest lines the daemon logged (also on stderr), for tests. */
    public List<String> log() {
        synchronized (log) {
            return List.copyOf(log);
        }
    }

    private void note(Log.Level level, String line) {
        synchronized (log) {
            if (log.size() == LOG_KEPT) {
                log.removeFirst();
            }
            log.add(line);
        }
        Log.write(level, line);
    }

    // --- configuration and journal ---

    /** complex_values parsed once per text: start-up checks the file's, then replays the journal's, the same. */
    private ComplexValues values(String text) throws ParseException {
        ComplexValues v = parsedValues.get(text);
        if (v == null) {
            v = ComplexValues.parse(text, table, limits);
            if (parsedValues.size() >= 8) {
                parsedValues.clear(); // generations come and go: keep the few of late
            }
            parsedValues.put(text, v);
        }
        return v;
    }

    private Cluster build(String host, String global) throws ParseException {
        Cluster c = new Cluster(table);
        c.configure(config.host(), values(host), 0);
        ComplexValues g = values(global);
        if (!g.entries().isEmpty()) {
            c.configure(Cluster.GLOBAL, g, 0);
        }
        return c;
    }

    private void replay() throws IOException, ParseException {
        for (String record : journal.replayed()) {
            JsonNode r = JSON.readTree(record);
            String op = r.path("op").asText();
            String id = r.path("job").asText();
            switch (op) {
                case "config" -> {
                    hostValues = r.path("complex_values").asText();
                    globalValues = r.path("global_complex_values").asText();
                    generation = r.path("generation").asLong();
                    Cluster next = build(hostValues, globalValues);
                    String lost = restoreAll(next);
                    if (lost != null) {
                        throw new IOException("journal: generation " + generation + " drops a grant: " + lost);
                    }
                    cluster = next;
                }
                case "start" -> {
                    if (cluster == null) {
                        throw new IOException("journal: a grant before any configuration record");
                    }
                    Grant grant = grantOf(r.path("grant"));
                    Map<Long, Instant> pids = new LinkedHashMap<>();
                    r.path("pids").fields().forEachRemaining(e -> pids.put(Long.parseLong(e.getKey()),
                            Instant.parse(e.getValue().asText())));
                    Job j = new Job(id, r.path("user").asText(""), r.path("request").asText(), r.path("slots").asInt(1),
                            grant, Map.of(), pids);
                    Decision d = cluster.restore(spec(id, j.request(), j.slots()), grant, 0);
                    if (d.isRefused()) {
                        throw new IOException("journal: job " + id + " cannot be restored: " + d.error());
                    }
                    jobs.put(id, j.withEnv(cluster.environment(id, config.host()).orElse(Map.of())));
                }
                case "enter" -> {
                    Job j = jobs.get(id);
                    if (j != null) {
                        jobs.put(id, j.withPid(r.path("pid").asLong(), r.hasNonNull("pid_start")
                                ? Instant.parse(r.path("pid_start").asText()) : null));
                    }
                }
                case "end" -> {
                    if (jobs.remove(id) != null) {
                        cluster.finish(id, 0);
                    }
                }
                default -> throw new IOException("journal: unknown record " + record);
            }
        }
    }

    /** host -> map -> ids, read from the journal's JSON by hand (a replay reads thousands). */
    private static Grant grantOf(JsonNode g) {
        Map<String, Map<String, List<String>>> byHost = new LinkedHashMap<>();
        g.fields().forEachRemaining(h -> {
            Map<String, List<String>> maps = new LinkedHashMap<>();
            h.getValue().fields().forEachRemaining(m -> {
                List<String> ids = new ArrayList<>(m.getValue().size());
                m.getValue().forEach(id -> ids.add(id.asText()));
                maps.put(m.getKey(), ids);
            });
            byHost.put(h.getKey(), maps);
        });
        return new Grant(byHost);
    }

    /** The journal's content for the current state: the configuration, then every held grant. */
    private List<String> snapshot() {
        List<String> out = new ArrayList<>();
        out.add(configRecord(generation, hostValues, globalValues).toString());
        for (Job j : jobs.values()) {
            out.add(startRecord(j).toString());
        }
        return out;
    }

    private static ObjectNode configRecord(long generation, String host, String global) {
        return JSON.createObjectNode().put("op", "config").put("generation", generation).put("complex_values", host)
                .put("global_complex_values", global);
    }

    private ObjectNode startRecord(Job j) {
        ObjectNode r = JSON.createObjectNode().put("op", "start").put("job", j.id()).put("user", j.user())
                .put("request", j.request()).put("slots", j.slots());
        r.set("grant", Views.grant(j.grant()));
        if (!j.pids().isEmpty()) {
            ObjectNode pids = r.putObject("pids");
            j.pids().forEach((pid, start) -> pids.put(Long.toString(pid), start.toString()));
        }
        return r;
    }

    private JobSpec spec(String id, String request, int slots) throws ParseException {
        RequestList parsed = parsedRequests.get(request);
        if (parsed == null) {
            parsed = RequestList.parse(request, table, limits);
            if (parsedRequests.size() < 1024) { // many jobs ask the same: a replay parses each text once
                parsedRequests.put(request, parsed);
            }
        }
        return new JobSpec(id, parsed, Map.of(config.host(), slots), config.host(), JobSpec.UNLIMITED, Optional.empty(),
                false);
    }

    /**
     * Puts every held grant, exactly, into {@code next} (a new configuration generation); null when all
     * fit, else which running job holds what {@code next} cannot give back.
     */
    private String restoreAll(Cluster next) {
        for (Job j : jobs.values()) {
            Decision d;
            try {
                d = next.restore(spec(j.id(), j.request(), j.slots()), j.grant(), 0);
            } catch (ParseException e) {
                return "running job " + j.id() + " holds: its request no longer parses: " + e.getMessage();
            }
            if (d.isRefused()) {
                return "running job " + j.id() + " holds: " + d.error();
            }
        }
        return null;
    }

    /**
     * Switches to new complex_values, keeping every running job's exact grant; refused (state unchanged)
     * when that is impossible, naming the job and the instance.
     */
    private void reconfigure(String host, String global) throws Session.CommandException {
        Cluster next;
        try {
            next = build(host, global);
        } catch (ParseException e) {
            throw new Session.CommandException("complex_values: " + e.getMessage());
        }
        String lost = restoreAll(next);
        if (lost != null) {
            throw new Session.CommandException("the new configuration would take away what " + lost);
        }
        long nextGeneration = generation + 1;
        append(configRecord(nextGeneration, host, global));
        cluster = next;
        stateCache = null;
        generation = nextGeneration;
        hostValues = host;
        globalValues = global;
        events.publish("config", mapNames(), null, null, () -> {
            ObjectNode diff = JSON.createObjectNode().put("event", "config").put("generation", generation);
            diff.set("maps", Views.maps(this, null, EventHub.Filters.NONE));
            return diff;
        }, s -> true);
    }

    private Set<String> mapNames() {
        return new LinkedHashSet<>(cluster.instances(config.host()).keySet());
    }

    private void append(ObjectNode record) throws Session.CommandException {
        try {
            journal.append(record.toString());
        } catch (IOException e) {
            throw new Session.CommandException("journal: " + e.getMessage());
        }
    }

    // --- commands ---

    /**
     * One command of one client; state changes are serialised under the daemon's lock. The whole state
     * as root or the admin sees it is kept, once built, until the next change: monitors that poll QUERY
     * are answered without the lock and never queue behind job starts.
     */
    List<Frame> handle(Code code, Frame command, Session session) throws Session.CommandException {
        String cached = stateCache;
        if (code == Code.QUERY && cached != null && command.args().isEmpty() && privileged(session.peer())) {
            return List.of(Frame.of(command.tid(), Code.STATE.value(), cached));
        }
        return handleLocked(code, command, session);
    }

    private synchronized List<Frame> handleLocked(Code code, Frame command, Session session)
            throws Session.CommandException {
        Session.Peer peer = session.peer();
        long tid = command.tid();
        switch (code) {
            case MODEL_DEF:
                noArguments(command);
                return Views.attributes(this, tid);
            case START_EVENTS: {
                noArguments(command);
                EventHub.Stream s = events.of(session);
                if (s.tid != null) {
                    throw new Session.CommandException("an event stream is already open (TID " + Long.toHexString(s.tid)
                            + "); STOP_EVENTS first");
                }
                s.tid = tid;
                session.post(Frame.of(tid, Code.STATE.value(), Views.state(this, peer, s.filters, null).toString()), true);
                session.keepOpen();
                return List.of();
            }
            case STOP_EVENTS:
                noArguments(command);
                if (!events.stop(session)) {
                    throw new Session.CommandException("no event stream is open");
                }
                return List.of();
            case LIST_FILTERS: {
                noArguments(command);
                ObjectNode f = JSON.createObjectNode();
                events.of(session).filters.toJson(f.putObject("filters"));
                ObjectNode keys = f.putObject("keys");
                mapNames().forEach(keys.putArray("map")::add);
                keys.put("job", "job identifiers (7, or 7.3 for an array task; 7 also matches its tasks)");
                keys.put("user", "user names");
                EventHub.KINDS.forEach(keys.putArray("event")::add);
                return List.of(Frame.of(tid, Code.FILTERS.value(), f.toString()));
            }
            case SET_FILTERS:
                events.of(session).filters = EventHub.Filters.parse(argument(command));
                return List.of();
            case QUERY: {
                JsonNode a = command.args().isEmpty() ? JSON.createObjectNode() : argument(command);
                String job = a.has("job") ? jobId(a) : null;
                if (job != null && !jobs.containsKey(job)) {
                    throw new Session.CommandException("job " + job + " holds nothing on " + config.host());
                }
                if (job != null && !mayQuery(peer, jobs.get(job))) {
                    throw new Session.CommandException("job " + job + " is not yours, '" + peer.user() + "'");
                }
                ObjectNode state = Views.state(this, peer, EventHub.Filters.NONE, job);
                if (a.has("explain")) {
                    state.set("explain", explain(a.path("explain").asText("")));
                }
                String text = state.toString();
                if (command.args().isEmpty() && privileged(peer)) {
                    stateCache = text;
                }
                return List.of(Frame.of(tid, Code.STATE.value(), text));
            }
            case JOB_START:
                authorise(code, peer);
                return jobStart(command);
            case JOB_END:
                authorise(code, peer);
                jobEnd(jobId(argument(command)), "epilog", true);
                return List.of();
            case JOB_ENTER:
                return jobEnter(command, peer);
            case RELOAD:
                authorise(code, peer);
                noArguments(command);
                return reload(tid);
            default:
                throw new Session.CommandException(code + " is not a command of this daemon");
        }
    }

    /** Why a request could or could not start on this host now, instance by instance. */
    private ObjectNode explain(String request) throws Session.CommandException {
        RequestList parsed;
        try {
            parsed = RequestList.parse(request, table, limits);
        } catch (ParseException e) {
            throw new Session.CommandException("explain: " + e.getMessage());
        }
        Explanation x = cluster.explain(parsed, config.host());
        return JSON.createObjectNode().put("request", request).put("can_start", x.canStart()).put("text", x.toHuman());
    }

    private synchronized void closed(Session session) {
        events.stop(session);
        events.forget(session);
    }

    private boolean privileged(Session.Peer peer) {
        return peer.isRoot() || peer.user().equals(config.adminUser());
    }

    boolean mayQuery(Session.Peer peer, Job job) {
        return privileged(peer) || !job.user().isEmpty() && job.user().equals(peer.user());
    }

    private void authorise(Code code, Session.Peer peer) throws Session.CommandException {
        if (!privileged(peer)) {
            throw new Session.CommandException(code + " is for root or the admin user " + config.adminUser() + ", not '"
                    + peer.user() + "'");
        }
    }

    /** {"job":"7","task":"1","user":"alice","slots":1,"request":"gpu=2[same=id]"} answered by STATE. */
    private List<Frame> jobStart(Frame command) throws Session.CommandException {
        JsonNode a = argument(command);
        String id = jobId(a);
        String request = a.path("request").asText("");
        int slots = a.path("slots").asInt(1);
        String user = a.path("user").asText("");
        if (request.isEmpty() || slots < 1) {
            throw new Session.CommandException("JOB_START needs \"request\" and \"slots\" of at least 1");
        }
        if (!user.isEmpty() && !USER.matcher(user).matches()) {
            throw new Session.CommandException("\"user\" is the job owner's name, not '" + user + "'");
        }
        if (jobs.containsKey(id)) {
            throw new Session.CommandException("job " + id + " already holds " + jobs.get(id).grant().byHost()
                    + "; a second JOB_START is refused (no doubled grants)");
        }
        JobSpec spec;
        try {
            spec = spec(id, request, slots);
        } catch (ParseException e) {
            throw new Session.CommandException("request: " + e.getMessage());
        }
        Decision d = cluster.submit(spec, cluster.now());
        if (d.isRefused()) {
            throw new Session.CommandException(d.error());
        }
        if (d.result() == Decision.Result.WAITING) {
            // execd already started the job here: it cannot wait. Say why, and leave nothing behind.
            Explanation x = cluster.explain(spec.request(), config.host());
            cluster.finish(id, cluster.now());
            StringBuilder why = new StringBuilder();
            x.maps().stream().filter(m -> !m.canStart()).forEach(m -> why.append(why.length() > 0 ? "; " : "")
                    .append(m.map()).append(": ").append(m.verdict()));
            throw new Session.CommandException("job " + id + " cannot be granted now: " + why);
        }
        Map<String, String> env = cluster.environment(id, config.host()).orElse(Map.of());
        Job job = new Job(id, user, request, slots, d.grant(), env, Map.of());
        try {
            journal.append(startRecord(job).toString());
        } catch (IOException e) {
            cluster.finish(id, cluster.now()); // not on disk: not granted
            throw new Session.CommandException("journal: " + e.getMessage());
        }
        jobs.put(id, job);
        stateCache = null;
        note(Log.Level.INFO, "job " + id + (user.isEmpty() ? "" : " (" + user + ")") + " granted " + env);
        events.publish("grant", job.maps(), id, user, () -> Views.job(job).put("event", "grant"),
                s -> mayQuery(s.peer(), job));
        return List.of(answer(command.tid(), job));
    }

    /** STATE {job, user, grants, env}, then the environment again as NAME=value (the C hook reads no JSON). */
    private static Frame answer(long tid, Job job) {
        List<String> args = new ArrayList<>();
        args.add(Views.job(job).toString());
        job.env().forEach((k, v) -> args.add(k + "=" + v));
        return Frame.of(tid, Code.STATE.value(), args.toArray(new String[0]));
    }

    private void jobEnd(String id, String why, boolean strict) throws Session.CommandException {
        Job job = jobs.get(id);
        if (job == null) {
            if (strict) {
                throw new Session.CommandException("job " + id + " holds nothing on " + config.host());
            }
            return;
        }
        append(JSON.createObjectNode().put("op", "end").put("job", id).put("why", why));
        cluster.finish(id, cluster.now());
        jobs.remove(id);
        stateCache = null;
        try {
            isolation.remove(id);
        } catch (DevicePolicyException e) {
            note(Log.Level.ERROR, "job " + id + ": removing its device policy: " + e.getMessage());
        }
        if (why.equals("epilog")) {
            note(Log.Level.INFO, "job " + id + " released " + job.env());
        }
        events.publish("release", job.maps(), id, job.user(),
                () -> Views.job(job).put("event", "release").put("why", why), s -> mayQuery(s.peer(), job));
    }

    /**
     * The starter: puts the calling process (its pid from SO_PEERCRED, never from the message) under the
     * job's device policy, and answers the job's environment like JOB_START. Only root, the admin or the
     * job's owner may, and never for a process inside another job's cgroup: that could widen what the
     * other job reaches.
     */
    private List<Frame> jobEnter(Frame command, Session.Peer peer) throws Session.CommandException {
        String id = jobId(argument(command));
        Job job = jobs.get(id);
        if (job == null) {
            throw new Session.CommandException("job " + id + " holds nothing on " + config.host()
                    + " (no JOB_START for it: did its prolog run?)");
        }
        if (!mayQuery(peer, job)) {
            throw new Session.CommandException("job " + id + " belongs to '" + job.user() + "', not '" + peer.user() + "'");
        }
        if (peer.pid() <= 0) {
            throw new Session.CommandException("the caller's pid is unknown: " + (PeerCredentials.UNAVAILABLE.isEmpty()
                    ? "the kernel did not say" : PeerCredentials.UNAVAILABLE));
        }
        try {
            Optional<String> other = JobCgroups.foreignJob(peer.pid(), id);
            if (other.isPresent()) {
                throw new Session.CommandException("process " + peer.pid() + " is in the cgroup of job " + other.get()
                        + ", not of job " + id + "; refused");
            }
        } catch (IOException e) {
            throw new Session.CommandException("process " + peer.pid() + ": cannot read its cgroups: " + e.getMessage());
        }
        DevicePolicy policy = DevicePolicy.of(grantedInstances(job));
        try {
            isolation.apply(id, policy, peer.pid()).ifPresent(w -> note(Log.Level.WARNING, w));
        } catch (DevicePolicyException e) {
            throw new Session.CommandException("job " + id + ": device isolation cannot be enforced: " + e.getMessage());
        }
        Instant start = ProcessHandle.of(peer.pid()).flatMap(p -> p.info().startInstant()).orElse(null);
        Job entered = job.withPid(peer.pid(), start);
        ObjectNode record = JSON.createObjectNode().put("op", "enter").put("job", id).put("pid", peer.pid())
                .put("pid_start", start == null ? null : start.toString());
        append(record);
        jobs.put(id, entered);
        return List.of(answer(command.tid(), entered));
    }

    /** The instances behind a job's grant on this host (and the global host), for its device policy. */
    private List<Instance> grantedInstances(Job job) {
        List<Instance> out = new ArrayList<>();
        job.grant().byHost().forEach((host, maps) -> maps.forEach((name, ids) -> {
            Optional<ResourceMap> m = cluster.hosts().getOrDefault(host, new ComplexValues(List.of())).resourceMap(name);
            for (String id : ids) {
                m.flatMap(rm -> rm.instance(id)).ifPresent(out::add);
            }
        }));
        return out;
    }

    private List<Frame> reload(long tid) throws Session.CommandException {
        if (configFile == null) {
            throw new Session.CommandException("this daemon was not started from a configuration file");
        }
        Config next;
        try {
            next = Config.parse(Files.readString(configFile, StandardCharsets.UTF_8), configFile, config.host());
        } catch (ParseException e) {
            throw new Session.CommandException(configFile + ": " + e.lineAndColumn() + ": " + e.problem());
        } catch (IOException e) {
            throw new Session.CommandException(configFile + ": " + e.getMessage());
        }
        List<String> unchangeable = new ArrayList<>();
        if (!next.host().equals(config.host())) {
            unchangeable.add("host");
        }
        if (!next.complexes().equals(config.complexes())) {
            unchangeable.add("complexes");
        }
        if (!next.socket().equals(config.socket()) || !next.stateDir().equals(config.stateDir())
                || !next.deviceBackend().equals(config.deviceBackend())) {
            unchangeable.add("socket, state_dir or device_backend");
        }
        if (!unchangeable.isEmpty()) {
            throw new Session.CommandException("RELOAD changes complex_values and global_complex_values only; "
                    + String.join(", ", unchangeable) + " changed: restart rsmapd for that");
        }
        boolean changed = !next.complexValues().equals(hostValues) || !next.globalComplexValues().equals(globalValues);
        if (changed) {
            reconfigure(next.complexValues(), next.globalComplexValues());
            note(Log.Level.INFO, "RELOAD: configuration generation " + generation);
        }
        return List.of(Frame.of(tid, Code.STATE.value(), JSON.createObjectNode().put("generation", generation)
                .put("changed", changed).toString()));
    }

    // --- reconciliation ---

    /**
     * Releases the grants of jobs that no longer exist: with {@code execd_spool} set, a job whose
     * {@code active_jobs/<job>.<task>} directory execd has removed; without it, a job whose starter
     * process (JOB_ENTER's pid, checked with its start time against pid reuse) has exited.
     */
    public void reconcile() {
        synchronized (this) {
            Map<String, String> gone = new LinkedHashMap<>(); // job -> why; released after the walk over jobs
            for (Job j : jobs.values()) {
                String why = goneReason(j);
                if (why != null) {
                    gone.put(j.id(), why);
                }
            }
            for (Map.Entry<String, String> g : gone.entrySet()) {
                String id = g.getKey();
                String why = g.getValue();
                try {
                    jobEnd(id, "reconciled", false);
                    note(Log.Level.WARNING, "released job " + id + " (" + why + ")");
                } catch (Session.CommandException e) {
                    note(Log.Level.ERROR, "could not release job " + id + ": " + e.getMessage());
                }
            }
        }
    }

    private String goneReason(Job j) {
        Path spool = config.execdSpool();
        if (spool != null) {
            String dir = j.id().indexOf('.') < 0 ? j.id() + ".1" : j.id();
            if (!Files.isDirectory(spool.resolve("active_jobs").resolve(dir))) {
                return "its spool directory active_jobs/" + dir + " is gone";
            }
        }
        if (!j.pids().isEmpty() && spool == null
                && j.pids().entrySet().stream().noneMatch(e -> Job.alive(e.getKey(), e.getValue()))) {
            return j.pids().size() == 1 ? "its process " + j.pids().keySet().iterator().next() + " has exited"
                    : "its processes " + j.pids().keySet() + " have exited";
        }
        return null;
    }

    // --- views for Views ---

    Config config() {
        return config;
    }

    Map<String, Job> jobs() {
        return jobs;
    }

    long generation() {
        return generation;
    }

    ComplexTable table() {
        return table;
    }

    private static void noArguments(Frame command) throws Session.CommandException {
        if (!command.args().isEmpty()) {
            throw new Session.CommandException("expected no argument, got " + command.args().size());
        }
    }

    private static JsonNode argument(Frame command) throws Session.CommandException {
        if (command.args().size() != 1) {
            throw new Session.CommandException("expected one JSON argument, got " + command.args().size());
        }
        String text = command.strictText(0).orElseThrow(() -> new Session.CommandException(
                "the argument is not valid UTF-8"));
        try {
            JsonNode n = JSON.readTree(text);
            if (n == null || !n.isObject()) {
                throw new Session.CommandException("the argument is not a JSON object");
            }
            return n;
        } catch (JsonProcessingException e) {
            throw new Session.CommandException("the argument is not JSON: " + e.getOriginalMessage());
        }
    }

    private static String jobId(JsonNode a) throws Session.CommandException {
        String job = a.path("job").asText("");
        if (!JOB.matcher(job).matches()) {
            throw new Session.CommandException("\"job\" is missing or not a job id: '" + job + "'");
        }
        String task = a.path("task").asText("");
        if (!task.isEmpty() && !task.equals("undefined") && !TASK.matcher(task).matches()) {
            throw new Session.CommandException("\"task\" is a task number or \"undefined\", not '" + task + "'");
        }
        return task.isEmpty() || task.equals("undefined") ? job : job + "." + task;
    }

    /** The socket's path, once serving. */
    public Path socket() {
        return server.path();
    }

    @Override
    public void close() throws IOException {
        if (timer != null) {
            timer.shutdownNow();
        }
        if (server != null) {
            server.close();
        }
        journal.close();
    }
}
