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
    /** A job as the journal names it: the job, or job.task for an array task. */
    private static final java.util.regex.Pattern JOB_TASK =
            java.util.regex.Pattern.compile("[A-Za-z0-9_+-]{1,100}(\\.[0-9]{1,10})?");
    /** The keys each command's argument may carry (hole 9: anything else is an ERROR). */
    private static final Set<String> JOB_KEYS = Set.of("job", "task");
    private static final Set<String> START_KEYS = Set.of("job", "task", "user", "slots", "request");
    private static final Set<String> QUERY_KEYS = Set.of("job", "task", "explain");
    /** The longest ERROR reason rsmapd sends: one line, well inside any client's frame limit. */
    static final int MAX_REASON = 1024;
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
    /**
     * Jobs that hold nothing here but entered (the starter enters every job, issue 11): under a closed
     * policy with no granted device until JOB_END or reconciliation. Not journaled: after a restart a
     * JOB_END still removes the policy by the job's name.
     */
    private final Map<String, Job> bare = new LinkedHashMap<>();
    private final StateLock stateLock;
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
        checkDaemonUser();
        checkSpool(config);
        this.isolation = isolation(config);
        String fileHost = config.complexValues();
        String fileGlobal = config.globalComplexValues();
        checkValues(fileHost, fileGlobal);
        // Before the journal and the socket: a second daemon on this state must touch neither (hole 5).
        this.stateLock = StateLock.acquire(config.stateDir());
        Journal opened = null;
        try {
            opened = Journal.open(config.stateDir().resolve("journal"));
            this.journal = opened;
            recover(fileHost, fileGlobal);
        } catch (IOException | ParseException | RuntimeException e) {
            if (opened != null) {
                opened.close();
            }
            stateLock.close();
            throw e;
        }
    }

    /** The journal's state, then the file's configuration where it differs; the journal compacted. */
    private void recover(String fileHost, String fileGlobal) throws IOException, ParseException {
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

    /** The configuration file and the line that set {@code key}, for error lines. */
    private String where(String key) {
        String file = configFile == null ? "rsmapd.conf" : configFile.toString();
        int line = config.lineOf(key);
        return line > 0 ? file + ": line " + line + ": " + key : file + ": " + key;
    }

    /**
     * The backend proves at start that it can enforce (issue 11, hole 3): with {@code isolation = required}
     * a backend that cannot stops the daemon; with {@code optional} jobs run unrestricted and that is said.
     */
    private Isolation isolation(Config config) throws IOException {
        if (config.isolation() == Isolation.Mode.OFF) {
            note(Log.Level.WARNING, "isolation = off: jobs run without a device policy and reach every device");
            return new Isolation(new rsmap.device.DryRunBackend(), Isolation.Mode.OFF);
        }
        try {
            // dry-run is the admin's explicit choice not to enforce (rsmapd.conf(5)); every other backend
            // proves here that it can.
            return new Isolation(Backends.choose(config.deviceBackend()), config.isolation());
        } catch (DevicePolicyException e) {
            if (config.isolation() == Isolation.Mode.REQUIRED) {
                throw new IOException(where("device_backend") + ": " + e.getMessage()
                        + " (isolation = required)", e);
            }
            note(Log.Level.WARNING, "device isolation is NOT enforced (isolation=optional): " + e.getMessage());
            return new Isolation(new rsmap.device.DryRunBackend(), Isolation.Mode.OPTIONAL);
        }
    }

    /**
     * The hooks trust a server of root or of {@code daemon_user} only (issue 11, hole 1): a daemon run as
     * another user would be refused by every hook, so it does not start.
     */
    private void checkDaemonUser() throws IOException {
        String me = System.getProperty("user.name", "");
        if (config.lineOf("daemon_user") > 0 && !me.equals("root") && !me.equals(config.daemonUser())) {
            throw new IOException(where("daemon_user") + ": rsmapd runs as '" + me + "', not as '" + config.daemonUser()
                    + "' or root: the hooks would not trust its answers");
        }
    }

    /**
     * An execd spool without {@code active_jobs} is a slip (the spool folder without the host part, issue
     * 11, hole 4): reconciling against it would release every running job. Refused at start and reload.
     */
    static void checkSpool(Config config, Path file) throws IOException {
        Path spool = config.execdSpool();
        if (spool == null) {
            return;
        }
        Path active = spool.resolve("active_jobs");
        if (!Files.isDirectory(active)) {
            String at = (file == null ? "rsmapd.conf" : file.toString())
                    + (config.lineOf("execd_spool") > 0 ? ": line " + config.lineOf("execd_spool") : "");
            throw new IOException(at + ": execd_spool: " + active + " is not a directory; execd_spool names execd's "
                    + "spool directory of this host (execd_spool_dir/<host>), which holds active_jobs/");
        }
    }

    private void checkSpool(Config config) throws IOException {
        checkSpool(config, configFile);
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
        try {
            bind();
        } catch (IOException e) {
            throw new IOException(where("socket") + ": cannot serve " + config.socket() + ": " + reason(e), e);
        }
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

    /** What went wrong with a file, in words: the JDK says only the path for some. */
    private static String reason(IOException e) {
        if (e instanceof java.nio.file.FileSystemException f) {
            String kind = f instanceof java.nio.file.AccessDeniedException ? "permission denied"
                    : f instanceof java.nio.file.NoSuchFileException ? "no such file or directory"
                    : f instanceof java.nio.file.FileAlreadyExistsException ? "exists and is not a directory"
                    : f.getReason() != null ? f.getReason() : e.getClass().getSimpleName();
            return (f.getFile() == null ? "" : f.getFile() + ": ") + kind;
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    private void bind() throws IOException {
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

    /**
     * Replays the journal's records in order. A record whose checksum holds but whose content does not
     * make sense (written by hand, or by a newer release) stops the daemon naming the record: guessing
     * would free or double a grant.
     */
    private void replay() throws IOException {
        List<String> records = journal.replayed();
        for (int i = 0; i < records.size(); i++) {
            try {
                replay(records.get(i));
            } catch (IOException | ParseException | RuntimeException e) {
                String why = e instanceof JsonProcessingException j ? "not JSON: " + j.getOriginalMessage()
                        : e instanceof ParseException p ? p.getMessage()
                        : e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
                throw new IOException(config.stateDir().resolve("journal") + ": record " + (i + 1) + ": "
                        + Args.oneLine(why, 300) + "; rsmapd will not guess which grants are held", e);
            }
        }
    }

    private void replay(String record) throws IOException, ParseException {
        JsonNode r = JSON.readTree(record);
        if (r == null || !r.isObject() || !r.path("op").isTextual()) {
            throw new IOException("not a record of rsmapd (no \"op\")");
        }
        String op = r.path("op").asText();
        String id = r.path("job").asText("");
        if (!op.equals("config") && !JOB_TASK.matcher(id).matches()) {
            throw new IOException("\"job\" is missing or not a job id: " + Args.quote(id));
        }
        switch (op) {
            case "config" -> {
                if (!r.path("complex_values").isTextual() || !r.path("global_complex_values").isTextual()
                        || !r.path("generation").canConvertToLong() || r.path("generation").asLong() < 1) {
                    throw new IOException("a configuration record needs complex_values, global_complex_values and a "
                            + "generation of at least 1");
                }
                hostValues = r.path("complex_values").asText();
                globalValues = r.path("global_complex_values").asText();
                generation = r.path("generation").asLong();
                Cluster next = build(hostValues, globalValues);
                String lost = restoreAll(next);
                if (lost != null) {
                    throw new IOException("generation " + generation + " drops a grant: " + lost);
                }
                cluster = next;
            }
            case "start" -> {
                if (cluster == null) {
                    throw new IOException("a grant before any configuration record");
                }
                if (!r.path("request").isTextual() || !r.path("grant").isObject() || !r.path("slots").canConvertToInt()
                        || r.path("slots").asInt() < 1) {
                    throw new IOException("a grant record needs request, slots and grant");
                }
                Grant grant = grantOf(r.path("grant"));
                Map<Long, Instant> pids = new LinkedHashMap<>();
                var fields = r.path("pids").fields();
                while (fields.hasNext()) {
                    var e = fields.next();
                    pids.put(Long.parseLong(e.getKey()), Instant.parse(e.getValue().asText()));
                }
                Job j = new Job(id, r.path("user").asText(""), r.path("request").asText(), r.path("slots").asInt(1),
                        grant, Map.of(), pids);
                Decision d = cluster.restore(spec(id, j.request(), j.slots()), grant, 0);
                if (d.isRefused()) {
                    throw new IOException("job " + id + " cannot be restored: " + d.error());
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
            default -> throw new IOException("unknown record kind " + Args.quote(op));
        }
    }

    /** host -> map -> ids, read from the journal's JSON by hand (a replay reads thousands). */
    private static Grant grantOf(JsonNode g) throws IOException {
        Map<String, Map<String, List<String>>> byHost = new LinkedHashMap<>();
        for (var hosts = g.fields(); hosts.hasNext();) {
            var h = hosts.next();
            if (!h.getValue().isObject()) {
                throw new IOException("grant: host " + Args.quote(h.getKey()) + " is not map -> ids");
            }
            Map<String, List<String>> maps = new LinkedHashMap<>();
            for (var ms = h.getValue().fields(); ms.hasNext();) {
                var m = ms.next();
                if (!m.getValue().isArray()) {
                    throw new IOException("grant: map " + Args.quote(m.getKey()) + " is not a list of ids");
                }
                List<String> ids = new ArrayList<>(m.getValue().size());
                for (JsonNode id : m.getValue()) {
                    if (!id.isTextual()) {
                        throw new IOException("grant: map " + Args.quote(m.getKey()) + " holds a non-string id");
                    }
                    ids.add(id.asText());
                }
                maps.put(m.getKey(), ids);
            }
            byHost.put(h.getKey(), maps);
        }
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
        try {
            return handleLocked(code, command, session);
        } catch (Session.CommandException e) {
            String reason = e.getMessage() == null ? code + " failed" : e.getMessage();
            if (reason.length() <= MAX_REASON && reason.indexOf('\n') < 0 && reason.indexOf('\r') < 0) {
                throw e;
            }
            throw new Session.CommandException(Args.oneLine(reason, MAX_REASON));
        }
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
                events.of(session).filters = EventHub.Filters.parse(Args.object(command)); // checks its keys
                return List.of();
            case QUERY: {
                Args a = Args.optional(code.name(), command, QUERY_KEYS);
                String job = a.has("job") ? jobId(a) : null;
                String explain = a.string("explain", null);
                if (job != null && !jobs.containsKey(job)) {
                    throw new Session.CommandException("job " + job + " holds nothing on " + config.host());
                }
                if (job != null && !mayQuery(peer, jobs.get(job))) {
                    throw new Session.CommandException("job " + job + " is not yours, '" + peer.user() + "'");
                }
                ObjectNode state = Views.state(this, peer, EventHub.Filters.NONE, job);
                if (explain != null) {
                    state.set("explain", explain(explain, peer));
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
            case JOB_END: {
                authorise(code, peer);
                String id = jobId(Args.of(code.name(), command, JOB_KEYS));
                if (!jobEnd(id, "epilog")) {
                    // Idempotent (hole 6): a retry after a lost answer, or a job that held nothing here. Its
                    // policy goes by name, also one applied before a restart.
                    removePolicy(id);
                }
                return List.of();
            }
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

    /**
     * Why a request could or could not start on this host now, instance by instance; a job owner sees
     * other users' jobs as {@value Views#OTHER}, as QUERY shows them (hole 7).
     */
    private ObjectNode explain(String request, Session.Peer peer) throws Session.CommandException {
        RequestList parsed;
        try {
            parsed = RequestList.parse(request, table, limits);
        } catch (ParseException e) {
            throw new Session.CommandException("explain: " + e.getMessage());
        }
        Explanation x = cluster.explain(parsed, config.host());
        if (!privileged(peer)) {
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
                    Job holder = jobs.get(why.substring("by job ".length()));
                    if (holder == null || !mayQuery(peer, holder)) {
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

    /**
     * {"job":"7","task":"1","user":"alice","slots":1,"request":"gpu=2[same=id]"} answered by STATE. A retry
     * of the same start (same request, owner and slots, no process entered yet) after a lost answer is
     * answered with the grant already made (hole 6, the idempotent prepare of Kubernetes DRA drivers);
     * anything else for a job that holds a grant is refused.
     */
    private List<Frame> jobStart(Frame command) throws Session.CommandException {
        Args a = Args.of(Code.JOB_START.name(), command, START_KEYS);
        String id = jobId(a);
        String request = a.string("request", "");
        int slots = a.integer("slots", 1, 1, 1_000_000);
        String user = a.string("user", "");
        if (request.isEmpty()) {
            throw new Session.CommandException("JOB_START needs \"request\"");
        }
        if (!user.isEmpty() && !USER.matcher(user).matches()) {
            throw new Session.CommandException("\"user\" is the job owner's name, not " + Args.quote(user));
        }
        Job held = jobs.get(id);
        if (held != null) {
            if (held.request().equals(request) && held.user().equals(user) && held.slots() == slots
                    && held.pids().isEmpty()) {
                note(Log.Level.INFO, "job " + id + ": JOB_START again (a retry), answered with its grant " + held.env());
                return List.of(answer(command.tid(), held));
            }
            throw new Session.CommandException("job " + id + " already holds " + held.grant().byHost()
                    + "; a second JOB_START is refused (no doubled grants)");
        }
        JobSpec spec;
        try {
            spec = spec(id, request, slots);
        } catch (ParseException e) {
            throw new Session.CommandException("request: " + e.getMessage());
        }
        if (bare.containsKey(id)) {
            // Processes entered this job before its prolog: not the order execd keeps, but a process that
            // waits in the job's cgroup for the grant to widen it. It leaves before anything is granted.
            note(Log.Level.WARNING, "job " + id + ": processes " + bare.get(id).pids().keySet()
                    + " entered before its JOB_START; their policy is removed before the grant");
            removePolicy(id);
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

    /** Frees the job's grant and policy; false when it held no grant here (nothing changed). */
    private boolean jobEnd(String id, String why) throws Session.CommandException {
        Job job = jobs.get(id);
        if (job == null) {
            return false;
        }
        append(JSON.createObjectNode().put("op", "end").put("job", id).put("why", why));
        cluster.finish(id, cluster.now());
        jobs.remove(id);
        stateCache = null;
        removePolicy(id);
        if (why.equals("epilog")) {
            note(Log.Level.INFO, "job " + id + " released " + job.env());
        }
        events.publish("release", job.maps(), id, job.user(),
                () -> Views.job(job).put("event", "release").put("why", why), s -> mayQuery(s.peer(), job));
        return true;
    }

    private void removePolicy(String id) {
        bare.remove(id);
        try {
            isolation.remove(id);
        } catch (DevicePolicyException e) {
            note(Log.Level.ERROR, "job " + id + ": removing its device policy: " + e.getMessage());
        }
    }

    /**
     * The starter: puts the calling process (its pid from SO_PEERCRED, never from the message) under the
     * job's device policy, and answers the job's environment like JOB_START. Only root, the admin or the
     * job's owner may, and never for a process inside another job's cgroup: that could widen what the
     * other job reaches. A job that holds nothing here is entered too, under a closed policy that grants
     * no device (hole 2: the starter fails closed, as flux-core's gpubind hides every GPU from a job
     * granted none); only hosts whose maps list no devices, or isolation = off, leave it unrestricted.
     */
    private List<Frame> jobEnter(Frame command, Session.Peer peer) throws Session.CommandException {
        String id = jobId(Args.of(Code.JOB_ENTER.name(), command, JOB_KEYS));
        Job job = jobs.get(id);
        if (job == null) {
            job = bare.getOrDefault(id, new Job(id, peer.user(), "", 1, new Grant(Map.of()), Map.of(), Map.of()));
        } else if (!mayQuery(peer, job)) {
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
        DevicePolicy policy = DevicePolicy.of(grantedInstances(job), devicesListed());
        try {
            isolation.apply(id, policy, peer.pid()).ifPresent(w -> note(Log.Level.WARNING, w));
        } catch (DevicePolicyException e) {
            throw new Session.CommandException("job " + id + ": device isolation cannot be enforced: " + e.getMessage());
        }
        Instant start = ProcessHandle.of(peer.pid()).flatMap(p -> p.info().startInstant()).orElse(null);
        Job entered = job.withPid(peer.pid(), start);
        if (!jobs.containsKey(id)) {
            bare.put(id, entered);
            note(Log.Level.INFO, "job " + id + " holds nothing here: process " + peer.pid() + " entered under "
                    + (policy.isOpen() ? "no device policy (no map lists devices)" : "a closed policy with no granted device"));
            return List.of(answer(command.tid(), entered));
        }
        ObjectNode record = JSON.createObjectNode().put("op", "enter").put("job", id).put("pid", peer.pid())
                .put("pid_start", start == null ? null : start.toString());
        append(record);
        jobs.put(id, entered);
        return List.of(answer(command.tid(), entered));
    }

    /** Whether any instance of this host or the global host lists devices: then every job's policy is closed. */
    private boolean devicesListed() {
        for (ComplexValues v : cluster.hosts().values()) {
            for (ResourceMap rm : v.resourceMaps()) {
                for (Instance i : rm.instances()) {
                    if (i.characteristics().get(rsmap.map.DeviceList.CHARACTERISTIC).isPresent()) {
                        return true;
                    }
                }
            }
        }
        return false;
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
            next = Config.parse(ConfigText.read(configFile), configFile, config.host());
            checkSpool(next, configFile);
        } catch (ParseException e) {
            throw new Session.CommandException(configFile + ": " + e.lineAndColumn() + ": " + e.problem());
        } catch (IOException e) {
            throw new Session.CommandException(e.getMessage());
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
            Path spool = config.execdSpool();
            if (spool != null && !readableDirectory(spool.resolve("active_jobs"))) {
                // Hole 4: an unreadable spool says nothing about any job; release nothing until it returns.
                note(Log.Level.ERROR, "reconciliation skipped: " + spool.resolve("active_jobs") + " is not a readable "
                        + "directory; no grant is released until it is");
                return;
            }
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
                    jobEnd(id, "reconciled");
                    note(Log.Level.WARNING, "released job " + id + " (" + why + ")");
                } catch (Session.CommandException e) {
                    note(Log.Level.ERROR, "could not release job " + id + ": " + e.getMessage());
                }
            }
            List<String> bareGone = new ArrayList<>();
            for (Job j : bare.values()) {
                if (goneReason(j) != null) {
                    bareGone.add(j.id());
                }
            }
            bareGone.forEach(this::removePolicy);
        }
    }

    private static boolean readableDirectory(Path dir) {
        if (!Files.isDirectory(dir) || !Files.isReadable(dir) || !Files.isExecutable(dir)) {
            return false;
        }
        try (var list = Files.newDirectoryStream(dir)) {
            return list.iterator() != null;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Why a job is positively gone, or null: its spool directory does not exist (a failed look is not
     * "gone"), or every process it entered has exited.
     */
    private String goneReason(Job j) {
        Path spool = config.execdSpool();
        if (spool != null) {
            String dir = j.id().indexOf('.') < 0 ? j.id() + ".1" : j.id();
            try {
                Files.readAttributes(spool.resolve("active_jobs").resolve(dir),
                        java.nio.file.attribute.BasicFileAttributes.class);
                return null;
            } catch (java.nio.file.NoSuchFileException e) {
                return "its spool directory active_jobs/" + dir + " is gone";
            } catch (IOException e) {
                return null; // cannot tell: keep it
            }
        }
        if (!j.pids().isEmpty() && j.pids().entrySet().stream().noneMatch(e -> Job.alive(e.getKey(), e.getValue()))) {
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

    private static String jobId(Args a) throws Session.CommandException {
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

    /** The socket's path, once serving. */
    public Path socket() {
        return server.path();
    }

    @Override
    public void close() throws IOException {
        if (timer != null) {
            timer.shutdownNow();
        }
        try {
            if (server != null) {
                server.close();
            }
            journal.close();
        } finally {
            stateLock.close();
        }
    }
}
