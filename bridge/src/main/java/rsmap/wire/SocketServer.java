// The Unix socket server of rsmapd: one thread accepts and judges peers, one selector thread reads and
// writes for every connection, a few workers execute commands; ServerLimits bounds what a peer can hold.
package rsmap.wire;

import java.io.IOException;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Listens on a Unix socket. A connection ends on QUIT, on a frame that cannot be delimited (after its
 * ERROR), when the client goes away, or when it breaks the budget of {@link ServerLimits}; a slow client
 * never blocks another.
 *
 * <p>Issue 11, hole 8: a thread and a 64 KiB buffer per connection let any local user end the daemon.
 * Here no thread or buffer belongs to a connection: the selector thread reads into its one direct
 * buffer (heap buffers given to a channel take a temporary direct buffer per thread, which is how
 * "Cannot reserve 65536 bytes of direct buffer memory" came about) and copies into the connection's
 * decoder, which holds only bytes that arrived. Commands run on {@link ServerLimits#workers} threads,
 * one at a time per connection and privileged peers' first. A thread of its own accepts and judges
 * every connection (SO_PEERCRED) as it arrives, so that a flood of connects neither slows the selector's
 * rounds nor keeps a privileged peer's connect waiting behind more than the short listen backlog.
 *
 * <p>The rooms: {@link Admission} (the socket and the accept thread), {@link SelectorLoop} (the selector
 * thread), {@link Workers} (the command threads), {@link Budget} (what peers hold, and who is shed or
 * timed out). This class builds them and carries each {@link Connection}'s hand-offs between them.
 */
public final class SocketServer implements AutoCloseable {
    /** The direct buffer of the selector thread and of each worker. */
    static final int BUFFER = 64 * 1024;
    private static final long CLOSE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);

    /** How the budget was used since start: for logs and tests. */
    public record Counters(long accepted, long refused, long shed, long timedOut) {
    }

    private final Path path;
    private final ServerLimits limits;
    /** Where every decoder's bytes are held: recycled, and given back a while after a flood. */
    private final Chunks chunks;
    private final Budget budget;
    private final ServerSocketChannel listener;
    private final SelectorLoop loop;
    private final Workers workers;
    private final Admission admission;

    /** Binds {@code path} (a stale socket file is replaced) and starts accepting. */
    public SocketServer(Path path, Supplier<Session.Handler> handlers, int maxFrame) throws IOException {
        this(path, handlers, maxFrame, "", "rw-rw----");
    }

    /** The same with mode and group (see below), the default limits, and root as the only privileged peer. */
    public SocketServer(Path path, Supplier<Session.Handler> handlers, int maxFrame, String group, String mode)
            throws IOException {
        this(path, handlers, ServerLimits.defaults(maxFrame), Session.Peer::isRoot, group, mode);
    }

    /**
     * Binds {@code path} with {@code mode} (like {@code rw-rw----}) and, unless empty, group {@code group}:
     * the socket is bound under a temporary name, given its mode and group, then renamed into place, so
     * that no client ever connects through wider permissions. {@code privileged} names the peers exempt
     * from the per-user limit and never shed (the daemon: root or its admin user).
     */
    public SocketServer(Path path, Supplier<Session.Handler> handlers, ServerLimits limits,
                        Predicate<Session.Peer> privileged, String group, String mode) throws IOException {
        this.path = path;
        this.limits = limits;
        this.chunks = Chunks.upTo(limits.maxBufferedInput());
        this.budget = new Budget(limits);
        listener = Admission.bind(path, group, mode);
        try {
            loop = new SelectorLoop(this, budget);
        } catch (IOException e) {
            listener.close();
            throw e;
        }
        workers = new Workers(limits.workers());
        admission = new Admission(this, listener, handlers, privileged, budget, loop);
        loop.start();
        admission.start();
    }

    public Path path() {
        return path;
    }

    public ServerLimits limits() {
        return limits;
    }

    public Counters counters() {
        return new Counters(admission.accepted(), admission.refused(), budget.shed(), budget.timedOut());
    }

    // ---- a connection's hand-offs, from any thread ----

    /** Gives {@code c}'s next command (or its end) to a worker, or reads on if it was paused. */
    void dispatch(Connection c) {
        if (!workers.runNext(c) && c.shouldResumeReading(limits.maxFrame())) {
            loop.resumeReading(c);
        }
    }

    /** A worker's Work failed outside the session's own handling: the connection goes, its session ends. */
    void failed(Connection c) {
        loop.close(c);
    }

    /** After a command: the worker writes its answers itself; what the socket does not take, the selector does. */
    void flushFromWorker(Connection c) {
        if (!(Thread.currentThread() instanceof Workers.Worker w)) {
            flushLater(c);
            return;
        }
        try {
            if (!c.flush(w.direct)) {
                flushLater(c);
            }
        } catch (IOException e) {
            loop.close(c);
        }
    }

    /** Asks the selector to write {@code c}'s queue when the socket can take it. */
    void flushLater(Connection c) {
        if (c.wantWrite()) {
            loop.writeWhenWritable(c);
        }
    }

    /** The session is over: close once its last answers are written, or after a grace period. */
    void closeWhenFlushed(Connection c) {
        if (c.startClosing(CLOSE_GRACE_NANOS)) {
            if (c.closingAndFlushed()) {
                loop.close(c);
            } else {
                flushLater(c);
            }
        }
    }

    Chunks chunks() {
        return chunks;
    }

    long pauseOutput() {
        return budget.pauseOutput();
    }

    long outputTotal() {
        return budget.outputTotal();
    }

    void addOutput(long bytes) {
        if (budget.addOutput(bytes)) {
            loop.shedOutput();
        }
    }

    void addInput(long bytes) {
        budget.addInput(bytes);
    }

    @Override
    public void close() throws IOException {
        admission.stop(); // ends the accept thread
        loop.stop();
        workers.stop();
        Files.deleteIfExists(path);
    }
}
