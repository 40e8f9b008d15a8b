// A host's connection to its authority of the global maps (issue 14): global grants asked and given back,
// the host registered and reconciled after every connect, its events forwarded; reconnects with backoff.
package rsmap.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import rsmap.alloc.Grant;
import rsmap.wire.Client;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Category;
import rsmap.wire.Session;

/**
 * Lock order: the daemon's lock, then this link's (a JOB_START holds the first while it asks the
 * authority). The link's own thread never holds both: it takes a snapshot of the host under the daemon's
 * lock, then connects under the link's. Every call to the authority is bounded by the connector's timeout. While the authority cannot be reached, a
 * job that needs a global map cannot start here (its JOB_START is refused naming the authority, the
 * prolog reschedules it) and a job that needs none starts as before; JOB_END frees here and tells the
 * authority when it can - the reconciliation after the next connect frees what it missed.
 */
final class AuthorityLink implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long MAX_BACKOFF_MS = 30_000;
    /** Events queued while the authority is away are dropped past this: the next registration says all. */
    private static final int MAX_QUEUED = 10_000;
    /** Events were dropped (guarded by {@link #events}): the next send is a new registration. */
    private boolean overflowed;

    /** One connection to the authority, INIT done (and authenticated). */
    interface Channel extends AutoCloseable {
        /** Sends without waiting; {@link #receive} reads the answer (nothing else is sent in between). */
        long send(Code code, String json) throws IOException;

        List<Frame> receive(long tid) throws IOException, Client.Refusal;

        default List<Frame> call(Code code, String json) throws IOException, Client.Refusal {
            return receive(send(code, json));
        }

        @Override
        void close();
    }

    /** Opens a channel to the authority. */
    interface Connector {
        Channel open() throws IOException, Client.Refusal;
    }

    private final String where;
    private final Connector connector;
    private final HostState s;
    private final Object daemonLock;
    private final LogBook log;
    private final Access access;
    private Channel channel;
    private long backoffMs = 250;
    private long nextTry;
    private String lastError = "not connected yet";
    private final Deque<String> events = new ArrayDeque<>();
    /** What the authority said of pending jobs at a handshake, for {@link #afterConnect} under the daemon's lock. */
    private final java.util.concurrent.ConcurrentLinkedQueue<java.util.Map<String, java.util.Optional<Grant>>> resolved =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** Applies {@link #resolved}; called with the daemon's lock held (JobLifecycle.resolvePending). */
    java.util.function.Consumer<java.util.Map<String, java.util.Optional<Grant>>> afterConnect = said -> { };

    /** Applies what handshakes said of pending jobs; the caller holds the daemon's lock. */
    void applyResolved() {
        for (java.util.Map<String, java.util.Optional<Grant>> said = resolved.poll(); said != null; said = resolved.poll()) {
            afterConnect.accept(said);
        }
    }

    /** How often a link with nothing else to say tells the authority it is there. */
    static final long KEEPALIVE_MS = 30_000;
    /** How long the link gathers events before it sends them in one HOST_EVENT. */
    static final long BATCH_MS = 50;
    /** Jobs whose global grant the authority said it does not know: refused new global instances. */
    private final Set<String> unconfirmed = new LinkedHashSet<>();
    private final Thread thread;
    private volatile boolean closed;

    AuthorityLink(String where, Connector connector, HostState s, Object daemonLock, LogBook log, Access access) {
        this.where = where;
        this.connector = connector;
        this.s = s;
        this.daemonLock = daemonLock;
        this.log = log;
        this.access = access;
        this.thread = new Thread(this::run, "rsmapd-authority");
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Work a JOB_START does while the authority decides its global part: the host forces its journal. */
    interface Meanwhile {
        void run() throws Session.CommandException;
    }

    /**
     * The global part {@code request} of job {@code id}: its grant of the global maps (host {@value
     * rsmap.alloc.Cluster#GLOBAL}), running {@code meanwhile} between sending it and reading the
     * authority's answer: the host's forced write overlaps the authority's, so a start with a global part
     * costs about one forced write more than the authority's round trip, not two. Called under the
     * daemon's lock.
     */
    Grant start(String id, String user, int slots, String request, Meanwhile meanwhile)
            throws Session.CommandException {
        ObjectNode arg = JSON.createObjectNode().put("host", s.host());
        jobFields(arg, id).put("user", user).put("slots", slots).put("request", request);
        List<Frame> answer = call(Code.JOB_START, arg.toString(), meanwhile);
        try {
            JsonNode job = JSON.readTree(answer.get(0).text(0));
            return JournalRecord.grant(job.path("grants"));
        } catch (IOException | RuntimeException e) {
            throw new Session.CommandException(Category.UNAVAILABLE, "authority " + where + " answered JOB_START with no grant: " + e);
        }
    }

    /** Gives job {@code id}'s global instances back; false (logged) when the authority cannot be told now. */
    boolean end(String id) {
        ObjectNode arg = JSON.createObjectNode().put("host", s.host());
        try {
            call(Code.JOB_END, jobFields(arg, id).toString());
            return true;
        } catch (Session.CommandException e) {
            log.note(Log.Level.WARNING, "job " + id + ": its global instances are given back at the next reconciliation"
                    + " with the authority: " + e.getMessage());
            return false;
        }
    }

    /** One of this host's events, for the authority's view of the cluster; sent by the link's thread. */
    void event(String diffJson) {
        synchronized (events) {
            if (diffJson.contains("\"event\":\"config\"")) {
                overflowed = true; // new maps: the authority learns their complex_values by a registration
            } else if (events.size() < MAX_QUEUED) {
                events.add(diffJson);
            } else {
                overflowed = true; // the view at the authority would miss events: register anew instead
            }
            events.notifyAll();
        }
    }

    private static ObjectNode jobFields(ObjectNode arg, String id) {
        int dot = id.indexOf('.');
        arg.put("job", dot < 0 ? id : id.substring(0, dot));
        if (dot >= 0) {
            arg.put("task", id.substring(dot + 1));
        }
        return arg;
    }

    /** A command to the authority; connects first when it is down and its backoff allows. */
    private List<Frame> call(Code code, String json) throws Session.CommandException {
        return call(code, json, () -> { });
    }

    /** The same, running {@code meanwhile} while the authority works on it. */
    private synchronized List<Frame> call(Code code, String json, Meanwhile meanwhile) throws Session.CommandException {
        if (channel == null) {
            if (System.currentTimeMillis() < nextTry) {
                throw new Session.CommandException(Category.UNAVAILABLE, "authority " + where + " unreachable: " + lastError);
            }
            connect(hello()); // the caller holds the daemon's lock: the snapshot is current
            applyResolved();
        }
        try {
            long tid = channel.send(code, json);
            meanwhile.run();
            return channel.receive(tid);
        } catch (Client.Refusal e) {
            throw new Session.CommandException(e.category().orElse(Category.BUSY), "authority " + where + ": " + e.getMessage());
        } catch (IOException | RuntimeException e) {
            down(e);
            throw new Session.CommandException(Category.UNAVAILABLE, "authority " + where + " unreachable: " + lastError);
        }
    }

    /**
     * Connects, then registers and reconciles with {@code hello} (a snapshot of this host taken under the
     * daemon's lock: {@link #hello()}). Holds the link's lock.
     */
    private void connect(Hello hello) throws Session.CommandException {
        try {
            channel = connector.open();
            handshake(hello);
            backoffMs = 250;
            log.note(Log.Level.INFO, "connected to the authority " + where);
        } catch (IOException | Client.Refusal | RuntimeException e) {
            down(e);
            throw new Session.CommandException(Category.UNAVAILABLE, "authority " + where + " unreachable: " + lastError);
        }
    }

    /** What a host tells its authority after every connect: its state, and its jobs' global grants. */
    private record Hello(String register, String reconcile, java.util.Map<String, String> remote) {
    }

    /**
     * The snapshot for the next handshake; called under the daemon's lock. Events before it are dropped
     * (the registration says all of them), events after it go out after the handshake.
     */
    private Hello hello() {
        synchronized (events) {
            events.clear();
        }
        Session.Peer root = new Session.Peer("root", "root", 0, 0, 0);
        ObjectNode state = Views.state(s, access, root, EventHub.Filters.NONE, null);
        // The authority's PLACE rebuilds this host's maps from them (issue 15).
        state.put("complex_values", String.valueOf(s.cluster.hosts().get(s.host())));
        ObjectNode jobs = JSON.createObjectNode();
        java.util.Map<String, String> remote = new java.util.HashMap<>();
        for (String id : s.remotePending) {
            jobs.put(id, "pending"); // the authority says what it holds for it
        }
        for (Job j : s.jobs.values()) {
            if (!j.remote().isEmpty()) {
                jobs.set(j.id(), Views.grant(j.remote()));
                remote.put(j.id(), j.remote().byHost().toString());
            }
        }
        return new Hello(JSON.createObjectNode().put("host", s.host()).<ObjectNode>set("state", state).toString(),
                JSON.createObjectNode().put("host", s.host()).<ObjectNode>set("jobs", jobs).toString(), remote);
    }

    private void handshake(Hello hello) throws IOException, Client.Refusal {
        channel.call(Code.REGISTER, hello.register());
        List<Frame> r = channel.call(Code.RECONCILE, hello.reconcile());
        JsonNode answer = JSON.readTree(r.get(0).text(0));
        unconfirmed.clear();
        for (String key : new String[] {"unknown", "differs"}) {
            for (JsonNode id : answer.path(key)) {
                unconfirmed.add(id.asText());
                log.note(Log.Level.ERROR, "job " + id.asText() + " holds global instances "
                        + hello.remote().getOrDefault(id.asText(), "?") + " that the authority " + where
                        + (key.equals("unknown") ? " does not know" : " holds otherwise")
                        + ": it gets no new global instance until an admin decides (JOB_END frees it)");
            }
        }
        java.util.Map<String, java.util.Optional<Grant>> said = new java.util.LinkedHashMap<>();
        for (java.util.Iterator<java.util.Map.Entry<String, JsonNode>> it = answer.path("held").fields(); it.hasNext();) {
            java.util.Map.Entry<String, JsonNode> e = it.next();
            said.put(e.getKey(), java.util.Optional.of(JournalRecord.grant(e.getValue())));
        }
        for (JsonNode id : answer.path("not_held")) {
            said.put(id.asText(), java.util.Optional.empty());
        }
        if (!said.isEmpty()) {
            resolved.add(said);
        }
        if (answer.path("freed").size() > 0) {
            log.note(Log.Level.INFO, "the authority freed the global instances of jobs that ended here: "
                    + answer.path("freed"));
        }
    }

    /**
     * For QUERY and {@code rsmap status}: where the authority is, whether connected (else the last error),
     * and the jobs whose global grant it did not confirm - what an admin decides about (JOB_END frees them).
     */
    synchronized ObjectNode view() {
        ObjectNode v = JSON.createObjectNode().put("address", where).put("connected", channel != null);
        if (channel == null) {
            v.put("error", lastError);
        }
        com.fasterxml.jackson.databind.node.ArrayNode u = v.putArray("unconfirmed");
        unconfirmed.forEach(u::add);
        return v;
    }

    private void down(Exception e) {
        lastError = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        if (channel != null) {
            channel.close();
            channel = null;
            log.note(Log.Level.WARNING, "lost the authority " + where + ": " + lastError);
        }
        nextTry = System.currentTimeMillis() + backoffMs;
        backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
    }

    /**
     * Reconnects with backoff, forwards events, and keeps the connection alive (a keepalive every {@link
     * #KEEPALIVE_MS} without other traffic, below the authority's idle timeout, which also finds an
     * authority gone without a FIN). The snapshot is taken under the daemon's lock, the network is used
     * under the link's alone: a command of this host waits at most for one call's timeout.
     */
    private void run() {
        long lastSent = System.currentTimeMillis();
        while (!closed) {
            boolean up;
            long due;
            synchronized (this) {
                up = channel != null;
                due = nextTry;
            }
            if (!up) {
                if (System.currentTimeMillis() >= due) {
                    Hello hello;
                    synchronized (daemonLock) {
                        hello = hello();
                    }
                    synchronized (this) {
                        if (channel == null) {
                            try {
                                connect(hello);
                                lastSent = System.currentTimeMillis();
                            } catch (Session.CommandException e) {
                                // logged by down(); tried again after the backoff
                            }
                        }
                    }
                    synchronized (daemonLock) {
                        applyResolved();
                    }
                }
                sleep(100);
                continue;
            }
            List<String> batch = new ArrayList<>();
            boolean any;
            synchronized (events) {
                if (events.isEmpty()) {
                    try {
                        events.wait(1000);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                any = !events.isEmpty();
            }
            if (any) {
                sleep(BATCH_MS); // gather what follows: one round trip for a burst, out of the way of grants
            }
            boolean reRegister;
            synchronized (events) {
                batch.addAll(events);
                events.clear();
                reRegister = overflowed;
                overflowed = false;
            }
            if (reRegister) {
                Hello hello;
                synchronized (daemonLock) {
                    hello = hello();
                }
                synchronized (this) {
                    if (channel != null) {
                        try {
                            channel.call(Code.REGISTER, hello.register());
                            lastSent = System.currentTimeMillis();
                        } catch (IOException | Client.Refusal | RuntimeException e) {
                            down(e);
                        }
                    }
                }
                continue;
            }
            if (batch.isEmpty() && System.currentTimeMillis() - lastSent < KEEPALIVE_MS) {
                continue;
            }
            synchronized (this) {
                if (channel != null) {
                    try {
                        ObjectNode arg = JSON.createObjectNode().put("host", s.host());
                        com.fasterxml.jackson.databind.node.ArrayNode diffs = arg.putArray("diffs");
                        for (String e : batch) {
                            diffs.add(JSON.readTree(e));
                        }
                        channel.call(Code.HOST_EVENT, arg.toString());
                        lastSent = System.currentTimeMillis();
                    } catch (IOException | Client.Refusal | RuntimeException e) {
                        down(e);
                    }
                }
            }
        }
    }

    private static void sleep(long ms) {
        try {
            TimeUnit.MILLISECONDS.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        synchronized (this) {
            if (channel != null) {
                channel.close();
                channel = null;
            }
        }
    }
}
