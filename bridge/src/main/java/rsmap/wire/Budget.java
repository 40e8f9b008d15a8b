// What the SocketServer's peers hold of its ServerLimits (connections per unprivileged uid, TCP connections
// not yet logged in, bytes of partial frames, bytes of unread answers, time), and which connections go when
// one of them is broken.
package rsmap.wire;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * Thread-safe accounting, filled by the acceptor, the selector and the workers. The judging methods run
 * on the selector thread over its open connections; they close through {@code close}, which is given the
 * connection and the reason its peer is told (null: nothing is told). Privileged connections are never
 * shed, but their bytes count towards the totals (see {@link ServerLimits}).
 */
final class Budget {
    /** A connection whose unread answers exceed this gets its next command once the client has read. */
    private static final long PAUSE_OUTPUT = 256 * 1024;

    private final ServerLimits limits;
    /** Open connections of each unprivileged uid: counted up by the acceptor, down by the selector. */
    private final Map<Object, Integer> perUser = new ConcurrentHashMap<>();
    /** TCP connections accepted whose login has not ended yet, in all and per source address. */
    private final LoginPlaces logins;
    private final AtomicLong input = new AtomicLong();
    private final AtomicLong output = new AtomicLong();
    private final AtomicBoolean shedScheduled = new AtomicBoolean();
    private final AtomicLong shed = new AtomicLong();
    private final AtomicLong timedOut = new AtomicLong();

    Budget(ServerLimits limits) {
        this.limits = limits;
        this.logins = new LoginPlaces(limits.maxUnauthenticated());
    }

    long shed() {
        return shed.get();
    }

    long timedOut() {
        return timedOut.get();
    }

    // ---- connections per user ----

    /** The bucket of the per-user limit that {@code peer} counts in: its uid where known, else its name. */
    static Object bucket(Session.Peer peer) {
        return peer.uid() >= 0 ? (Object) peer.uid() : peer.user();
    }

    /** What a peer over its user's limit is told. */
    String tooMany(Session.Peer peer) {
        return "too many connections of user '" + peer.user() + "' (uid " + peer.uid() + "): the limit is "
                + limits.perUserConnections() + " per user";
    }

    /** Counts a new connection of {@code user}; false, and nothing counted, when that is over its limit. */
    boolean open(Object user) {
        if (perUser.merge(user, 1, Integer::sum) > limits.perUserConnections()) {
            release(user);
            return false;
        }
        return true;
    }

    /** A connection of {@code user} is closed (or was never served). */
    void release(Object user) {
        perUser.computeIfPresent(user, (u, n) -> n <= 1 ? null : n - 1);
    }

    // ---- TCP connections not logged in yet ----

    /**
     * Counts a TCP connection from {@code source} that must now log in; null when counted, else why not
     * (nothing counted): too many wait in all, or from that address ({@link LoginPlaces}).
     */
    String awaitLogin(java.net.InetAddress source) {
        return logins.take(source);
    }

    /** A connection from {@code source} no longer awaits its login (it ended, or the connection closed). */
    void loginEnded(java.net.InetAddress source) {
        logins.give(source);
    }

    // ---- bytes ----

    long pauseOutput() {
        return Math.min(PAUSE_OUTPUT, limits.maxEventBacklog());
    }

    long outputTotal() {
        return output.get();
    }

    /** Counts bytes queued to write (negative: written or dropped); true when shedding must be scheduled. */
    boolean addOutput(long bytes) {
        return output.addAndGet(bytes) > limits.maxQueuedOutput() && bytes > 0 && !shedScheduled.getAndSet(true);
    }

    void addInput(long bytes) {
        input.addAndGet(bytes);
    }

    /** Input beyond the budget: the unprivileged connections holding most are closed until it fits. */
    void shedInput(Collection<Connection> open, BiConsumer<Connection, String> close) {
        while (input.get() > limits.maxBufferedInput()) {
            Connection worst = largest(open, true);
            if (worst == null) {
                return; // only privileged peers hold input: they are never shed
            }
            shed.incrementAndGet();
            close.accept(worst, "rsmapd holds more partial frames than its budget of " + limits.maxBufferedInput()
                    + " bytes; this connection held the most (" + worst.inputHeld() + " bytes) and is closed");
        }
    }

    void shedOutput(Collection<Connection> open, BiConsumer<Connection, String> close) {
        shedScheduled.set(false);
        while (output.get() > limits.maxQueuedOutput()) {
            Connection worst = largest(open, false);
            if (worst == null) {
                return;
            }
            shed.incrementAndGet();
            close.accept(worst, null); // it does not read: an ERROR would only wait behind the rest
        }
    }

    private static Connection largest(Collection<Connection> open, boolean ofInput) {
        Connection worst = null;
        long most = 0;
        for (Connection c : open) {
            long held = ofInput ? c.inputHeld() : c.outputHeld();
            if (!c.privileged() && held > most) {
                worst = c;
                most = held;
            }
        }
        return worst;
    }

    // ---- time ----

    /** Closes the connections of {@code due} whose time is up ({@code close} must leave {@code due} as it is). */
    void closeExpired(long now, List<Connection> due, BiConsumer<Connection, String> close) {
        long idle = limits.idleTimeout().toNanos();
        long frame = limits.frameTimeout().toNanos();
        long login = limits.loginTimeout().toNanos();
        for (Connection c : due) {
            String why = c.expired(now, idle, frame, login);
            if (why == null) {
                continue;
            }
            switch (why) {
                case "idle":
                    timedOut.incrementAndGet();
                    close.accept(c, "idle for " + seconds(limits.idleTimeout()) + ": the connection is closed");
                    break;
                case "frame":
                    timedOut.incrementAndGet();
                    close.accept(c, "a frame was not complete within " + seconds(limits.frameTimeout())
                            + ": the connection is closed");
                    break;
                case "login":
                    timedOut.incrementAndGet();
                    close.accept(c, "not logged in within " + seconds(limits.loginTimeout())
                            + " of the connect: the connection is closed");
                    break;
                default:
                    close.accept(c, null); // closing, and the client did not read its last answers in time
            }
        }
    }

    private static String seconds(java.time.Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + " s" : String.format(java.util.Locale.ROOT, "%.1f s", ms / 1000.0);
    }
}
