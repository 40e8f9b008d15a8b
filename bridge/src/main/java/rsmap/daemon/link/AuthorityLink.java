// A host's connection to its authority of the global maps, as a state machine (DOWN, UP, CLOSED): global
// grants asked and given back, the host registered and reconciled after every connect, its events forwarded.
package rsmap.daemon.link;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import rsmap.alloc.Grant;
import rsmap.daemon.job.GlobalPart;
import rsmap.daemon.job.GroupAgreement;
import rsmap.daemon.records.JournalFields;
import rsmap.daemon.state.Access;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;
import rsmap.daemon.state.WireErrors;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.wire.Client;
import rsmap.wire.Code;
import rsmap.wire.Frame;

/**
 * The states and their transitions, each a method, all under the link's lock:
 * <pre>
 *   DOWN --connected()--> UP --lost()--> DOWN      (a connect that fails: lost() again, DOWN stays DOWN)
 *   DOWN, UP --close()--> CLOSED
 * </pre>
 * DOWN waits until {@link #nextTry}: the backoff (250 ms doubling to 30 s) between failed connects, but
 * the first try after an UP link is lost is at once (an authority restart is noticed by the lost
 * connection), and while a job's global part waits to be given back the wait is at most {@link
 * #GIVE_BACK_RETRY_MS}: the seat a job's epilog freed reaches the authority within that and one connect
 * after the authority is back (docs/cluster.md). A JOB_END that cannot be told now is given back by the
 * RECONCILE of the next connect.
 * <p>
 * Lock order: the daemon's lock, then this link's (a JOB_START holds the first while it asks the
 * authority). The link's own thread never holds both: it takes a snapshot of the host under the daemon's
 * lock, then connects under the link's. Every call to the authority is bounded by the connector's timeout.
 */
public final class AuthorityLink implements GlobalPart {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final long MIN_BACKOFF_MS = 250;
    /** The longest wait between connects while a job's global part waits to be given back. */
    static final long GIVE_BACK_RETRY_MS = 500;
    /** How often a link with nothing else to say tells the authority it is there. */
    static final long KEEPALIVE_MS = 30_000;

    enum State { DOWN, UP, CLOSED }

    private final String where;
    private final AuthorityChannel.Connector connector;
    private final HostState s;
    private final Object daemonLock;
    private final LogBook log;
    private final Access access;
    /** Applies what a handshake said of pending starts; called with the daemon's lock held. */
    private final Consumer<Map<JobId, Optional<Grant>>> afterConnect;
    private final Thread thread;

    // --- the state, guarded by this link's lock ---
    private State state = State.DOWN;
    /** Open exactly when UP. */
    private AuthorityChannel channel;
    private long backoffMs = MIN_BACKOFF_MS;
    /** When DOWN: the time of the next connect. */
    private long nextTry;
    private String lastError = "not connected yet";
    /** Jobs whose global part could not be given back yet: the next connect's RECONCILE does. */
    private final Set<JobId> givenBackLater = new LinkedHashSet<>();
    /** Jobs whose global grant the authority said it does not know: refused new global instances. */
    private Set<String> unconfirmed = Set.of();

    private final HostEvents events = new HostEvents();
    /** What handshakes said of pending starts, until applied under the daemon's lock. */
    private final ConcurrentLinkedQueue<Map<JobId, Optional<Grant>>> resolved = new ConcurrentLinkedQueue<>();

    public AuthorityLink(String where, AuthorityChannel.Connector connector, HostState s, Object daemonLock, LogBook log, Access access,
                  Consumer<Map<JobId, Optional<Grant>>> afterConnect) {
        this.where = where;
        this.connector = connector;
        this.s = s;
        this.daemonLock = daemonLock;
        this.log = log;
        this.access = access;
        this.afterConnect = afterConnect;
        this.thread = new Thread(this::run, "rsmapd-authority");
        thread.setDaemon(true);
    }

    @Override
    public void start() {
        thread.start();
    }

    // --- transitions ---

    /** DOWN -> UP: a channel opened and the handshake done. */
    private void connected(AuthorityChannel c, AuthorityHandshake.Answer answer) {
        channel = c;
        state = State.UP;
        backoffMs = MIN_BACKOFF_MS;
        unconfirmed = answer.unconfirmed();
        if (!answer.said().isEmpty()) {
            resolved.add(answer.said());
        }
        if (!givenBackLater.isEmpty()) {
            log.note(Log.Level.INFO, "the authority " + where + " was told by the reconciliation that jobs "
                    + givenBackLater + " gave their global instances back");
            givenBackLater.clear(); // RECONCILE lists the host's jobs: the authority freed what they held
        }
        log.note(Log.Level.INFO, "connected to the authority " + (c.address().isEmpty() ? where : c.address()));
    }

    /**
     * UP -> DOWN (the connection broke: the authority stopped, restarted or became unreachable; the next
     * connect is at once) or DOWN -> DOWN (a connect failed: the next after the backoff, or sooner while
     * a global part waits to be given back).
     */
    private void lost(Exception e) {
        lastError = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        long now = System.currentTimeMillis();
        if (state == State.UP) {
            channel.close();
            channel = null;
            state = State.DOWN;
            log.note(Log.Level.WARNING, "lost the authority " + where + ": " + lastError);
            nextTry = now;
            backoffMs = MIN_BACKOFF_MS;
            return;
        }
        nextTry = now + (givenBackLater.isEmpty() ? backoffMs : Math.min(backoffMs, GIVE_BACK_RETRY_MS));
        backoffMs = Math.min(backoffMs * 2, connector.maxBackoffMs());
    }

    /** Any state -> CLOSED: the daemon stops. */
    @Override
    public void close() {
        synchronized (this) {
            state = State.CLOSED;
            if (channel != null) {
                channel.close();
                channel = null;
            }
        }
        thread.interrupt();
    }

    /** A job's global part waits to be given back: DOWN tries again within {@link #GIVE_BACK_RETRY_MS}. */
    private void giveBackLater(JobId id) {
        givenBackLater.add(id);
        nextTry = Math.min(nextTry, System.currentTimeMillis() + GIVE_BACK_RETRY_MS);
    }

    synchronized State state() {
        return state;
    }

    // --- what the host's rooms ask (GlobalPart) ---

    /**
     * The global part {@code request} of job {@code id}: its grant of the global maps (host {@value
     * rsmap.alloc.Cluster#GLOBAL}), running {@code meanwhile} between sending it and reading the
     * authority's answer: the host's forced write overlaps the authority's, so a start with a global part
     * costs about one forced write more than the authority's round trip, not two. Under the daemon's lock.
     */
    @Override
    public Grant start(JobId id, String user, int slots, String request, Meanwhile meanwhile)
            throws Refusal {
        ObjectNode arg = JSON.createObjectNode().put("host", s.host());
        id.fields(arg).put("user", user).put("slots", slots).put("request", request);
        List<Frame> answer = call(Code.JOB_START, arg.toString(), meanwhile);
        try {
            JsonNode job = JSON.readTree(answer.get(0).text(0));
            return JournalFields.grant(job.path("grants"));
        } catch (IOException | RuntimeException e) {
            throw Refusal.unavailable("authority " + where + " answered JOB_START with no grant: " + e);
        }
    }

    @Override
    public rsmap.alloc.GroupKeys groupKeys(JobId id, rsmap.alloc.GroupKeys proposed) throws Refusal {
        return GroupAgreement.answered(where, call(Code.JOB_KEY, GroupAgreement.ask(s.host(), id, proposed), () -> { }));
    }

    /** Gives job {@code id}'s global instances back; when the authority cannot be told now, at the next connect. */
    @Override
    public void end(JobId id) {
        ObjectNode arg = JSON.createObjectNode().put("host", s.host());
        try {
            call(Code.JOB_END, id.fields(arg).toString(), () -> { });
        } catch (Refusal e) {
            synchronized (this) {
                giveBackLater(id);
            }
            log.note(Log.Level.WARNING, "job " + id + ": its global instances are given back at the next reconciliation"
                    + " with the authority: " + e.getMessage());
        }
    }

    /** One of this host's events, for the authority's view of the cluster; sent by the link's thread. */
    @Override
    public void event(String kind, Supplier<String> diffJson) {
        events.add(kind, diffJson);
    }

    /** Never: the link's view changes without the host's state; said without this link's lock (Commands#quick). */
    @Override
    public boolean cacheable() {
        return false;
    }

    /**
     * For QUERY and {@code rsmap status}: where the authority is, whether connected (else the last error),
     * and the jobs whose global grant it did not confirm - what an admin decides about (JOB_END frees them).
     */
    @Override
    public synchronized Optional<ObjectNode> view() {
        ObjectNode v = JSON.createObjectNode().put("address", where).put("connected", state == State.UP);
        if (state != State.UP) {
            v.put("error", lastError);
        } else if (!channel.address().isEmpty()) {
            v.put("active", channel.address()); // which of several authorities this host follows
        }
        ArrayNode u = v.putArray("unconfirmed");
        unconfirmed.forEach(u::add);
        return Optional.of(v);
    }

    /** Applies what handshakes said of pending jobs; the caller holds the daemon's lock. */
    private void applyResolved() {
        for (Map<JobId, Optional<Grant>> said = resolved.poll(); said != null; said = resolved.poll()) {
            afterConnect.accept(said);
        }
    }

    /** A command to the authority, running {@code meanwhile} while it works on it; connects first when due. */
    private synchronized List<Frame> call(Code code, String json, Meanwhile meanwhile) throws Refusal {
        if (state != State.UP) {
            if (state == State.CLOSED || System.currentTimeMillis() < nextTry) {
                throw Refusal.unavailable("authority " + where + " unreachable: " + lastError);
            }
            connect(snapshot()); // the caller holds the daemon's lock: the snapshot is current
            applyResolved();
        }
        try {
            long tid = channel.send(code, json);
            meanwhile.run();
            return channel.receive(tid);
        } catch (Client.Refusal e) {
            throw new Refusal(WireErrors.kind(e.category(), Refusal.Kind.BUSY), "authority " + where + ": " + e.getMessage());
        } catch (Client.Oversize e) {
            // Not sent, the link still up: the job's request is too long for the protocol, which asking again
            // or another authority would not change (a lost link would be, and the hook would ask again).
            throw Refusal.refused("authority " + where + ": " + e.getMessage());
        } catch (IOException | RuntimeException e) {
            lost(e);
            throw Refusal.unavailable("authority " + where + " unreachable: " + lastError);
        }
    }

    /** Connects and runs the handshake with {@code hello}: UP, or still DOWN. Holds the link's lock. */
    private void connect(AuthorityHandshake.Hello hello) throws Refusal {
        AuthorityChannel c = null;
        try {
            c = connector.open();
            connected(c, AuthorityHandshake.run(c, hello, where, log));
        } catch (IOException | Client.Refusal | RuntimeException e) {
            if (c != null) {
                c.close();
            }
            lost(e);
            throw Refusal.unavailable("authority " + where + " unreachable: " + lastError);
        }
    }

    /**
     * The host as the next handshake tells it; called under the daemon's lock. Events before it are
     * dropped (the registration says all of them), events after it go out after the handshake.
     */
    private AuthorityHandshake.Hello snapshot() {
        events.clear();
        return AuthorityHandshake.hello(s, access);
    }

    // --- the link's thread ---

    /**
     * DOWN: connects when due. UP: forwards events in batches, and keeps the connection alive (a keepalive
     * every {@link #KEEPALIVE_MS} without other traffic, below the authority's idle timeout, which also
     * finds an authority gone without a FIN). The snapshot is taken under the daemon's lock, the network
     * is used under the link's alone: a command of this host waits at most for one call's timeout.
     */
    private void run() {
        long lastSent = System.currentTimeMillis();
        while (true) {
            State now = state();
            if (now == State.CLOSED) {
                return;
            }
            if (now == State.DOWN) {
                if (reconnectWhenDue()) {
                    lastSent = System.currentTimeMillis();
                }
                sleep(100);
                continue;
            }
            Optional<Long> sent = forward(System.currentTimeMillis() - lastSent >= KEEPALIVE_MS);
            if (sent.isPresent()) {
                lastSent = sent.get();
            }
        }
    }

    /** DOWN and due: one connect; true when it came UP. */
    private boolean reconnectWhenDue() {
        synchronized (this) {
            if (state != State.DOWN || System.currentTimeMillis() < nextTry) {
                return false;
            }
        }
        AuthorityHandshake.Hello hello;
        synchronized (daemonLock) {
            hello = snapshot();
        }
        boolean up = false;
        synchronized (this) {
            if (state == State.DOWN) {
                try {
                    connect(hello);
                    up = true;
                } catch (Refusal e) {
                    // logged as lost(); tried again when due
                }
            }
        }
        synchronized (daemonLock) {
            applyResolved();
        }
        return up;
    }

    /**
     * UP: waits up to a second for events, gathers a burst ({@link HostEvents#take}), and sends them in one
     * HOST_EVENT (nothing, or the keepalive when {@code keepalive}); a new registration instead when events
     * were dropped. The time it sent, if it did.
     */
    private Optional<Long> forward(boolean keepalive) {
        HostEvents.Batch batch = events.take(1000);
        String register = null;
        if (batch.reRegister()) {
            synchronized (daemonLock) {
                register = snapshot().register();
            }
        } else if (batch.isEmpty() && !keepalive) {
            return Optional.empty();
        }
        synchronized (this) {
            if (state != State.UP) {
                return Optional.empty();
            }
            try {
                if (register != null) {
                    channel.call(Code.REGISTER, register);
                } else {
                    ObjectNode arg = JSON.createObjectNode().put("host", s.host());
                    ArrayNode diffs = arg.putArray("diffs");
                    for (String e : batch.diffs()) {
                        diffs.add(JSON.readTree(e));
                    }
                    channel.call(Code.HOST_EVENT, arg.toString());
                }
                return Optional.of(System.currentTimeMillis());
            } catch (IOException | Client.Refusal | RuntimeException e) {
                lost(e);
                return Optional.empty();
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
}
