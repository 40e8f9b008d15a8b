// PLACE in a lane of its own: a per-user rate, a few at once, and the daemon's lock held only for the
// snapshot, so that a PLACE flood by any local user never holds up a grant (docs/cluster.md, "PLACE").
package rsmap.daemon.authority;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import rsmap.daemon.state.Access;
import rsmap.daemon.state.Refusal;
import rsmap.wire.Frame;
import rsmap.wire.Session;

/**
 * An unprivileged user gets {@value #RATE} PLACE a second (a bucket of {@value #BURST}): a PLACE over it
 * waits for its turn (a flooding client waits instead of spinning on refusals), or gets ERROR after
 * {@value #WAIT_MS} ms when that turn is further away; at most {@link #MAX_WAITING} PLACE wait at once (half the
 * authority's workers), the next gets ERROR. One PLACE is computed at a time, whoever asks (one core at most, whatever the
 * flood); one that finds the lane taken waits up to {@value #WAIT_MS} ms, then gets ERROR. The model it
 * chooses over is built from a copy taken under the daemon's lock ({@link Placing#snapshot}: reference
 * copies, O(hosts + jobs)), outside the lock, and serves the PLACEs of the next {@value #FRESH_MS} ms:
 * PLACE answers from a view at most that old (it never grants; the host decides at JOB_START). JOB_START,
 * JOB_END and the hosts' events wait for the copies only.
 */
public final class PlaceLane {
    public static final int RATE = 5;
    public static final int BURST = 10;
    static final int LANES = 1;
    static final long FRESH_MS = 1_000;
    static final long WAIT_MS = 2_000;
    /** PLACE waiting for their rate or the lane at once, all users: half the authority's workers. */
    static final int MAX_WAITING = Authority.WORKERS / 2;
    private static final long TOKEN = 1_000_000_000L;

    private final Placing placing;
    private final Access access;
    private final Object lock;
    private final Semaphore lanes = new Semaphore(LANES, true);
    private final java.util.concurrent.atomic.AtomicInteger waiting = new java.util.concurrent.atomic.AtomicInteger();
    /** The model of late; read and replaced in the lane only. */
    private Placing.Built built;
    /** Per unprivileged uid: tokens left (scaled by 1e9) and when they were last counted. */
    private final Map<Long, long[]> buckets = new ConcurrentHashMap<>();

    public PlaceLane(Placing placing, Access access, Object lock) {
        this.placing = placing;
        this.access = access;
        this.lock = lock;
    }

    public List<Frame> place(Frame c, Session.Peer peer) throws Refusal {
        if (waiting.incrementAndGet() > MAX_WAITING) {
            waiting.decrementAndGet();
            throw Refusal.busy("PLACE: " + MAX_WAITING + " PLACE wait already; try again later");
        }
        try {
            if (!access.privileged(peer)) {
                long wait = take(peer.uid());
                if (wait > TimeUnit.MILLISECONDS.toNanos(WAIT_MS)) {
                    TimeUnit.MILLISECONDS.sleep(WAIT_MS); // refused, but not at once: no spinning on refusals
                    throw Refusal.busy("PLACE: user '" + peer.user() + "' is over its rate of " + RATE
                            + " a second; try again later");
                }
                TimeUnit.NANOSECONDS.sleep(wait); // its turn in its rate: a flooding client waits, it does not spin
            }
            if (!lanes.tryAcquire(WAIT_MS, TimeUnit.MILLISECONDS)) {
                throw Refusal.busy("PLACE: the authority is placing already and did not end within "
                        + WAIT_MS / 1000 + " s; try again later");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Refusal.unavailable("PLACE: interrupted");
        } finally {
            waiting.decrementAndGet();
        }
        try {
            if (built == null || System.nanoTime() - built.at() > TimeUnit.MILLISECONDS.toNanos(FRESH_MS)) {
                Placing.Snapshot in;
                synchronized (lock) {
                    in = placing.snapshot();
                }
                built = placing.build(in);
            }
            return placing.place(c, built);
        } finally {
            lanes.release();
        }
    }

    /**
     * Takes one token of {@code uid}'s bucket (refilled at {@link #RATE} a second up to {@link #BURST}),
     * possibly ahead of time: how long the caller must wait for it, in ns (0: at once). A wait longer than
     * {@link #WAIT_MS} takes nothing.
     */
    private long take(long uid) {
        long now = System.nanoTime();
        long[] b = buckets.computeIfAbsent(uid, u -> new long[] {BURST * TOKEN, now});
        synchronized (b) {
            long tokens = Math.min(BURST * TOKEN, b[0] + (now - b[1]) * RATE);
            b[1] = now;
            long wait = tokens >= TOKEN ? 0 : (TOKEN - tokens) / RATE;
            if (wait > TimeUnit.MILLISECONDS.toNanos(WAIT_MS)) {
                b[0] = tokens;
                return wait;
            }
            b[0] = tokens - TOKEN; // negative: owed, paid by the wait
            return wait;
        }
    }
}
