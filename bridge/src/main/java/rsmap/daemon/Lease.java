// An authority's hold on its state directory as a lease that must be renewed (docs/cluster.md, "Active and
// standby"): one holder at a time, each takeover a new epoch, the holder fenced before every answer.
package rsmap.daemon;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The file {@code state_dir/lock} holds the lease ({@link LeaseRecord}) in two slots, and two POSIX
 * (fcntl) byte locks, which NFSv4 carries to its server:
 * <ul>
 *   <li>byte 0, the <b>mutex</b>: held for the few microseconds of one read-and-write of the lease
 *   (a renewal, a takeover), so that two standbys never both take it and a renewal never crosses a takeover;</li>
 *   <li>byte 1, the <b>life</b> lock: held by the active for its life. The kernel (or the NFS server, after
 *   its own lease time) frees it when the holder dies: a standby that gets it takes over at once.</li>
 * </ul>
 * A holder that is alive but stopped (SIGSTOP, a paused VM, a partition) keeps its life lock: a standby
 * takes over when it has seen the lease unchanged for {@code takeover_timeout} by its own monotonic clock
 * (no clocks of two machines are compared). The holder renews every quarter of the timeout and trusts its
 * lease for three quarters after the start of its last renewal ({@link #check}): past that, it reads the
 * lease again before it answers anything, and a newer epoch stops it. A record it forced before a check
 * that passed is on disk before any takeover, which replays it.
 */
final class Lease implements Closeable, Records.Fence {
    /** The exit status of an authority that lost its lease (EX_TEMPFAIL: restarted, it becomes a standby). */
    static final int FENCED = 75;
    /** The lease files this JVM holds: a second channel on one, closed, would drop the first's locks. */
    private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

    private final Path file;
    private final Path key;
    private final FileChannel channel;
    private final String me;
    private final long timeoutNanos;
    /** What stops a holder that lost its lease; by default the process, with the line. */
    private final Consumer<String> stop;

    // --- guarded by this ---
    private FileLock life;
    /** The lease as last read, and when (monotonic) it was first seen so: a standby's clock of the holder. */
    private Optional<LeaseRecord> seen = Optional.empty();
    private long seenSince = System.nanoTime();
    /** When held: this holder's lease; else empty. */
    private Optional<LeaseRecord> mine = Optional.empty();
    /** When held: the monotonic time at which the last successful renewal began. */
    private volatile long renewedAt;
    private Thread renewer;
    private boolean closed;

    private Lease(Path file, Path key, FileChannel channel, String me, Duration timeout, Consumer<String> stop) {
        this.file = file;
        this.key = key;
        this.channel = channel;
        this.me = me;
        this.timeoutNanos = timeout.toNanos();
        this.stop = stop;
    }

    /**
     * Opens the lease of {@code stateDir} for the authority {@code me} (how others name it: HOST:PORT);
     * takes nothing yet. {@code stop} is told why when this holder must stop.
     */
    static Lease open(Path stateDir, String me, Duration timeout, Consumer<String> stop) throws IOException {
        Files.createDirectories(stateDir);
        Path file = stateDir.resolve("lock");
        Path key = file.toAbsolutePath().normalize();
        if (!HELD.add(key)) {
            throw new IOException("state_dir " + stateDir + " is in use by another rsmapd in this process; one daemon"
                    + " per state directory and process");
        }
        try {
            FileChannel ch = FileChannel.open(file, Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS));
            return new Lease(file, key, ch, me, timeout, stop);
        } catch (IOException e) {
            HELD.remove(key);
            throw new IOException(file + ": cannot open the lease" + (Files.isSymbolicLink(file)
                    ? ": it is a symbolic link, not followed" : ": " + e.getMessage()), e);
        }
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
     * it stayed unchanged for the timeout. True when this one holds it now (and renews it from then on).
     */
    synchronized boolean poll() throws IOException {
        if (mine.isPresent()) {
            return true;
        }
        FileLock mutex = channel.tryLock(0, 1, false);
        if (mutex == null) {
            return false; // a renewal or takeover is under way: look again at the next poll
        }
        try {
            long now = System.nanoTime();
            Optional<LeaseRecord> current = LeaseRecord.read(channel);
            if (!current.equals(seen)) {
                seen = current;
                seenSince = now;
            }
            if (life == null) {
                life = channel.tryLock(1, 1, false);
            }
            boolean expired = now - seenSince >= timeoutNanos;
            // No lease but a life lock held: an rsmapd that keeps no lease (a host's, an older release's)
            // holds this directory; it is never taken from it.
            if (life == null && (current.isEmpty() || !expired)) {
                return false;
            }
            LeaseRecord taken = LeaseRecord.first(current.map(LeaseRecord::epoch).orElse(0L) + 1, me);
            taken.write(channel, current);
            channel.force(false);
            mine = Optional.of(taken);
            seen = mine;
            renewedAt = now;
            startRenewing();
            return true;
        } finally {
            mutex.release();
        }
    }

    /** The lease as this authority last read it (as the standby follows it), or its own when it holds it. */
    synchronized Optional<LeaseRecord> current() {
        return mine.isPresent() ? mine : seen;
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
                stop.accept("the authority " + me + " holds no lease on " + file.getParent()
                        + "; it answers nothing more");
            }
        }
    }

    /** One renewal: the lease read again under the mutex; its own epoch renewed, another's stops this one. */
    synchronized void renew() {
        if (mine.isEmpty() || closed) {
            return;
        }
        long start = System.nanoTime();
        try {
            FileLock mutex = null;
            while (mutex == null) {
                mutex = channel.tryLock(0, 1, false);
                if (mutex == null) {
                    if (System.nanoTime() - start > timeoutNanos / 2) {
                        throw new IOException("its lock has been held by another process for half the takeover_timeout");
                    }
                    Thread.onSpinWait();
                    sleep(5);
                }
            }
            try {
                Optional<LeaseRecord> current = LeaseRecord.read(channel);
                if (current.isEmpty() || current.get().epoch() != mine.get().epoch()) {
                    String by = current.map(r -> "epoch " + r.epoch() + ", " + r.holder() + ", since " + r.since())
                            .orElse("a lease that does not read");
                    stopping("the authority " + me + " lost its lease on " + file.getParent() + " (its epoch "
                            + mine.get().epoch() + "; now " + by + "): another authority is active; this one"
                            + " answers nothing more and stops");
                    return;
                }
                LeaseRecord next = current.get().renewed();
                next.write(channel, current);
                channel.force(false);
                mine = Optional.of(next);
                seen = mine;
                renewedAt = start;
                if (life == null) {
                    life = channel.tryLock(1, 1, false); // taken from a stopped holder: its life lock, once it is gone
                }
            } finally {
                mutex.release();
            }
        } catch (IOException | RuntimeException e) {
            if (closed) {
                return; // stopping: the channel closed under a renewal
            }
            if (System.nanoTime() - renewedAt >= timeoutNanos / 4 * 3) {
                stopping("the authority " + me + " cannot renew its lease on " + file.getParent() + ": "
                        + e.getMessage() + "; a standby may take over, so this one answers nothing more and stops");
            } else {
                Log.write(Log.Level.WARNING, "lease " + file + ": renewal failed, tried again: " + e.getMessage());
            }
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
        try {
            channel.close();
        } finally {
            HELD.remove(key);
        }
    }
}
