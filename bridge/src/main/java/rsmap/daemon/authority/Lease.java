// An authority's hold on its state directory as a lease that must be renewed (docs/cluster.md, "Active and
// standby"): one holder at a time, each takeover a new epoch, the holder fenced before every answer.
package rsmap.daemon.authority;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Consumer;
import rsmap.daemon.records.Records;
import rsmap.log.Log;

/**
 * The lease lives in {@code state_dir/lock} with its byte locks ({@link LeaseFile}: takeover, life, renewal).
 * A standby takes over ({@link #poll}) when nobody ever held the lease or when its holder died (its life
 * lock is free). A holder that is alive but stopped (SIGSTOP, a paused VM, a partition) keeps its locks: a
 * standby takes over when it has seen the lease unchanged for {@code takeover_timeout} by its own monotonic
 * clock (no clocks of two machines are compared). Since a stopped holder holds no lock a standby needs,
 * not even when it stopped inside a renewal, the takeover never waits on it. The holder renews every quarter of the
 * timeout and trusts its lease for three quarters after the start of its last renewal ({@link #check}):
 * past that, it reads the lease again before it answers anything, and a newer epoch stops it. A renewal
 * may cross a takeover from a holder alive but stopped: the new holder then serves only when three quarters
 * of the timeout have passed since, unless it found the former's renewal lock free and its lease as it had
 * seen it. A record the former forced before a check that passed is on disk before any takeover serves,
 * and the takeover replays it.
 */
public final class Lease implements Closeable, Records.Fence {
    /** The exit status of an authority that lost its lease (EX_TEMPFAIL: restarted, it becomes a standby). */
    public static final int FENCED = 75;
    /** What {@link #take} says when it did not take the lease. */
    private static final long NOT_TAKEN = Long.MIN_VALUE;

    private final LeaseFile file;
    private final String me;
    private final long timeoutNanos;
    /** What stops a holder that lost its lease; by default the process, with the line. */
    private final Consumer<String> stop;

    // --- guarded by this ---
    /** When held: this epoch's life lock (kept until the channel closes, which releases it). */
    private FileLock life;
    /** When held: byte 1, once it was free. */
    private FileLock anyLife;
    /** The lease as last read, and when (monotonic) it was first seen so: a standby's clock of the holder. */
    private Optional<LeaseRecord> seen = Optional.empty();
    private long seenSince = System.nanoTime();
    /** When held: this holder's lease; else empty. */
    private Optional<LeaseRecord> mine = Optional.empty();
    /** When held: the monotonic time at which the last successful renewal began. */
    private volatile long renewedAt;
    private Thread renewer;
    private boolean closed;
    /** While a takeover waits to serve ({@link #crossing}): the former's lease, and from when (monotonic). */
    private Optional<LeaseRecord> former = Optional.empty();
    private long serveAt;

    private Lease(LeaseFile file, String me, Duration timeout, Consumer<String> stop) {
        this.file = file;
        this.me = me;
        this.timeoutNanos = timeout.toNanos();
        this.stop = stop;
    }

    /**
     * Opens the lease of {@code stateDir} for the authority {@code me} (how others name it: HOST:PORT);
     * takes nothing yet. {@code stop} is told why when this holder must stop.
     */
    static Lease open(Path stateDir, String me, Duration timeout, Consumer<String> stop) throws IOException {
        return new Lease(LeaseFile.open(stateDir), me, timeout, stop);
    }

    /** The default stop: the line on stderr and in the log, then exit {@value #FENCED}, answering nothing more. */
    static Consumer<String> halting() {
        return why -> {
            Log.write(Log.Level.ERROR, why);
            System.err.flush();
            Runtime.getRuntime().halt(FENCED);
        };
    }

    /**
     * One look at the lease: takes it when nobody ever held it, its holder died (its life lock is free), or
     * it stayed unchanged for the timeout. True when this one holds it now (and renews it from then on);
     * after a takeover that a renewal may have crossed, only once the former's trust in it has run out.
     */
    boolean poll() throws IOException {
        long serveAt;
        synchronized (this) {
            if (mine.isPresent()) {
                return true;
            }
            serveAt = take();
        }
        if (serveAt == NOT_TAKEN) {
            return false;
        }
        for (long left = serveAt - System.nanoTime(); left > 0; left = serveAt - System.nanoTime()) {
            sleep(Math.max(1, left / 1_000_000));
        }
        synchronized (this) {
            former = Optional.empty();
            return mine.isPresent();
        }
    }

    /** One look under the takeover lock: {@link #NOT_TAKEN}, or the monotonic time from which to serve. */
    private long take() throws IOException {
        FileLock mutex = file.tryLock(LeaseFile.TAKEOVER);
        if (mutex == null) {
            return NOT_TAKEN; // another standby is looking: look again at the next poll
        }
        try {
            long now = System.nanoTime();
            Optional<LeaseRecord> current = file.read();
            if (!current.equals(seen)) {
                seen = current;
                seenSince = now;
            }
            boolean dead;
            if (current.isEmpty()) {
                // No lease but byte 1 held: an rsmapd that keeps no lease (a host's, an older release's)
                // holds this directory; it is never taken from it.
                anyLife = anyLife != null ? anyLife : file.tryLock(LeaseFile.ANY_LIFE);
                if (anyLife == null) {
                    return NOT_TAKEN;
                }
                dead = true;
            } else {
                FileLock probe = file.tryLock(LeaseFile.lifeByte(current.get().epoch()));
                dead = probe != null;
                if (probe != null) {
                    probe.release();
                } else if (now - seenSince < timeoutNanos) {
                    return NOT_TAKEN;
                }
            }
            long epoch = current.map(LeaseRecord::epoch).orElse(0L) + 1;
            FileLock myLife = file.tryLock(LeaseFile.lifeByte(epoch));
            if (myLife == null) {
                return NOT_TAKEN; // cannot be: a taker of this epoch holds byte 0 too
            }
            try {
                LeaseRecord taken = LeaseRecord.first(epoch, me);
                file.write(taken);
                mine = Optional.of(taken);
            } finally {
                if (mine.isEmpty()) {
                    myLife.release();
                }
            }
            life = myLife;
            seen = mine;
            renewedAt = now;
            anyLife = anyLife != null ? anyLife : file.tryLock(LeaseFile.ANY_LIFE);
            startRenewing();
            if (dead) {
                return now;
            }
            this.serveAt = crossing(current.get());
            if (this.serveAt - System.nanoTime() > 0) {
                former = current;
            }
            return this.serveAt;
        } finally {
            mutex.release();
        }
    }

    /**
     * After a takeover from a holder alive but stopped: now, when its renewal lock is free and its lease is
     * as this one last saw it (every renewal it starts from now on reads the new epoch and stops it); else
     * three quarters of the timeout from now, when any renewal of it that began before the takeover has
     * run out.
     */
    private long crossing(LeaseRecord was) throws IOException {
        FileLock renewal = file.tryLock(LeaseFile.renewalByte(was.epoch()));
        try {
            if (renewal != null && file.read(was.epoch()).equals(Optional.of(was))) {
                return System.nanoTime();
            }
        } finally {
            if (renewal != null) {
                renewal.release();
            }
        }
        Log.write(Log.Level.INFO, "took over from " + was.holder() + " (epoch " + was.epoch() + "), which may"
                + " have been renewing: serving in " + timeoutNanos / 4 * 3 / 1_000_000 + " ms, when that renewal has run"
                + " out");
        return System.nanoTime() + timeoutNanos / 4 * 3;
    }

    /**
     * The lease as this authority last read it (as the standby follows it), or its own when it holds it; while
     * a takeover waits to serve, the former's, which it still follows until then.
     */
    synchronized Optional<LeaseRecord> current() {
        return former.isPresent() ? former : mine.isPresent() ? mine : seen;
    }

    /** While a takeover waits to serve: in how many milliseconds it serves (at least 1); else empty. */
    synchronized OptionalLong servingIn() {
        return former.isPresent() ? OptionalLong.of(Math.max(1, (serveAt - System.nanoTime()) / 1_000_000))
                : OptionalLong.empty();
    }

    /** How often a standby looks at the lease: a tenth of the timeout, from 50 ms to 100 ms. */
    long pollMillis() {
        return Math.max(50, Math.min(100, timeoutNanos / 10_000_000));
    }

    /** The epoch of the held lease, stamped on every journal record; 0 before it is held. */
    @Override
    public long epoch() {
        return mine.map(LeaseRecord::epoch).orElse(0L);
    }

    /**
     * The fence, before any answer goes out: within three quarters of the timeout after the last renewal
     * began, nothing to do; past it, a renewal now. A newer epoch, or a lease that cannot be read, stops
     * this authority ({@link #stop}) before it answers.
     */
    @Override
    public void check() {
        if (System.nanoTime() - renewedAt < timeoutNanos / 4 * 3) {
            return;
        }
        renew();
        synchronized (this) {
            if (mine.isEmpty() && !closed) {
                stop.accept("the authority " + me + " holds no lease on " + file.path().getParent()
                        + "; it answers nothing more");
            }
        }
    }

    /**
     * One renewal: the lease read again under this epoch's renewal lock; its own epoch renewed, another's
     * stops this one. A renewal held up past a quarter of the timeout between its read and its write (the
     * process stopped) reads again before it writes.
     */
    synchronized void renew() {
        if (mine.isEmpty() || closed) {
            return;
        }
        long start = System.nanoTime();
        long epoch = mine.get().epoch();
        try {
            while (!renewOnce(start, epoch)) {
                // held up between its read and its write: read again
            }
        } catch (IOException | RuntimeException e) {
            if (closed) {
                return; // stopping: the channel closed under a renewal
            }
            if (System.nanoTime() - renewedAt >= timeoutNanos / 4 * 3) {
                stopping("the authority " + me + " cannot renew its lease on " + file.path().getParent() + ": "
                        + e.getMessage() + "; a standby may take over, so this one answers nothing more and stops");
            } else {
                Log.write(Log.Level.WARNING, "lease " + file.path() + ": renewal failed, tried again: " + e.getMessage());
            }
        }
    }

    /** False when held up between the read and the write: nothing written. */
    private boolean renewOnce(long start, long epoch) throws IOException {
        FileLock lock = null;
        while (lock == null) {
            lock = file.tryLock(LeaseFile.renewalByte(epoch));
            if (lock == null) {
                if (System.nanoTime() - start > timeoutNanos / 2) {
                    throw new IOException("its renewal lock has been held by another process for half the"
                            + " takeover_timeout");
                }
                sleep(5); // a standby's look after its takeover: microseconds
            }
        }
        try {
            Optional<LeaseRecord> current = file.read();
            long readAt = System.nanoTime();
            if (current.isEmpty() || current.get().epoch() != epoch) {
                String by = current.map(r -> "epoch " + r.epoch() + ", " + r.holder() + ", since " + r.since())
                        .orElse("a lease that does not read");
                stopping("the authority " + me + " lost its lease on " + file.path().getParent() + " (its epoch "
                        + epoch + "; now " + by + "): another authority is active; this one"
                        + " answers nothing more and stops");
                return true;
            }
            LeaseRecord next = current.get().renewed();
            if (System.nanoTime() - readAt > timeoutNanos / 4) {
                return false;
            }
            file.write(next);
            mine = Optional.of(next);
            seen = mine;
            renewedAt = start;
            anyLife = anyLife != null ? anyLife : file.tryLock(LeaseFile.ANY_LIFE);
            return true;
        } finally {
            lock.release();
        }
    }

    private void stopping(String why) {
        mine = Optional.empty(); // checks that follow the stop's line fail too
        renewedAt = Long.MIN_VALUE / 2;
        stop.accept(why);
    }

    private void startRenewing() {
        long every = Math.max(10, timeoutNanos / 4 / 1_000_000);
        renewer = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                sleep(every);
                synchronized (this) {
                    if (closed || mine.isEmpty()) {
                        return;
                    }
                }
                renew();
            }
        }, "rsmapd-lease");
        renewer.setDaemon(true);
        renewer.start();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Lets go: the life lock goes with the channel, and a standby takes over at its next poll. */
    @Override
    public void close() throws IOException {
        Thread t;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            t = renewer;
        }
        if (t != null) {
            t.interrupt();
        }
        file.close();
    }
}
