// The socket server of rsmapd, on a Unix socket and/or TCP: a thread per socket accepts and judges peers,
// one selector thread reads and writes for every connection, a few workers execute commands (and TCP
// logins); ServerLimits bounds what a peer can hold.
package rsmap.wire;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Listens on a Unix socket, on TCP, or on both (an authority: hosts over TCP, local tools on its socket;
 * the authority), with one selector, one set of workers and one budget for all. A connection ends on QUIT, on
 * a frame that cannot be delimited (after its ERROR), when the client goes away, or when it breaks the
 * budget of {@link ServerLimits}; a slow client never blocks another.
 *
 * <p>a thread and a 64 KiB buffer per connection let any local user end the daemon.
 * Here no thread or buffer belongs to a connection: the selector thread reads into its one direct
 * buffer (heap buffers given to a channel take a temporary direct buffer per thread, which is how
 * "Cannot reserve 65536 bytes of direct buffer memory" came about) and copies into the connection's
 * decoder, which holds only bytes that arrived. Commands run on {@link ServerLimits#workers} threads,
 * one at a time per connection and privileged peers' first, so that one waiting for the daemon's lock or
 * its journal's force never stalls another connection; what needs no lock, no I/O but the socket and
 * cannot block ({@link Session.Handler#quick}, a Unix peer's INIT) the selector answers itself, sparing
 * a thread's wake-up, while none of that connection's commands is queued or running. The selector also
 * accepts and judges the Unix socket's connections (SO_PEERCRED), at most 16 a
 * round, and reads each at once: a hook's commands are there behind its connect. TCP's are accepted on a
 * thread of their own (see {@link Admission}).
 *
 * <p>Over TCP the kernel cannot say who the peer is: a connection is no one until its INIT carries a
 * credential that the {@link Authenticator} accepts (see {@link Session}); the login runs on a worker, and
 * privilege and the per-user limit are judged then, on the peer it proved. Until then it holds one of
 * {@link ServerLimits#maxUnauthenticated} places, for at most {@link ServerLimits#loginTimeout}.
 *
 * <p>The rooms: {@link Admission} (a socket, accepted on the selector thread, or over TCP on a thread of its own), {@link TcpLogin} (a TCP peer's INIT),
 * {@link SelectorLoop} (the selector thread), {@link Workers} (the command threads), {@link Budget} (what
 * peers hold, and who is shed or timed out). This class builds them and carries each {@link Connection}'s
 * hand-offs between them.
 */
public final class SocketServer implements AutoCloseable {
    /** The direct buffer of the selector thread and of each worker. */
    static final int BUFFER = 64 * 1024;
    /** How many commands of one connection the selector answers in a row before the next goes to a worker. */
    static final int INLINE_RUN = 8;
    private static final long CLOSE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);

    /** How the budget was used since start: for logs and tests. */
    public record Counters(long accepted, long refused, long shed, long timedOut) {
    }

    /** Null when the server listens on TCP only. */
    private final Path path;
    private final InetSocketAddress tcpAddress;
    private final ServerLimits limits;
    /** Where every decoder's bytes are held: recycled, and given back a while after a flood. */
    private final Chunks chunks;
    private final Budget budget;
    private final SelectorLoop loop;
    private final Workers workers;
    private final List<Admission> doors = new ArrayList<>();
    private final TcpLogin tcp;

    /** What a server listens on and how it judges its peers; {@link #start} binds and serves. */
    public static final class Builder {
        private final Supplier<Session.Handler> handlers;
        private ServerLimits limits = ServerLimits.defaults();
        private Predicate<Session.Peer> privileged = Session.Peer::isRoot;
        private Path path;
        private String group = "";
        private String mode = "rw-rw----";
        private InetSocketAddress tcpAddress;
        private Authenticator authenticator;

        private Builder(Supplier<Session.Handler> handlers) {
            this.handlers = Objects.requireNonNull(handlers, "handlers");
        }

        /**
         * The Unix socket at {@code path} with {@code mode} (like {@code rw-rw----}) and, unless empty, group
         * {@code group}: it is bound under a temporary name, given its mode and group, then renamed into
         * place, so that no client ever connects through wider permissions. A stale socket file is replaced.
         */
        public Builder unix(Path path, String group, String mode) {
            this.path = Objects.requireNonNull(path, "path");
            this.group = Objects.requireNonNull(group, "group");
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /** TCP on {@code address} (port 0: an ephemeral one, see {@link #tcpAddress}); every peer logs in with INIT. */
        public Builder tcp(InetSocketAddress address, Authenticator authenticator) {
            this.tcpAddress = Objects.requireNonNull(address, "address");
            this.authenticator = Objects.requireNonNull(authenticator, "authenticator");
            return this;
        }

        /** Default: {@link ServerLimits#defaults()}. */
        public Builder limits(ServerLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /**
         * The peers exempt from the per-user limit and never shed, and whose commands run first (the
         * daemon: root or its admin user; the default: root). Over TCP, judged on the peer a login proved.
         */
        public Builder privileged(Predicate<Session.Peer> privileged) {
            this.privileged = Objects.requireNonNull(privileged, "privileged");
            return this;
        }

        /** Binds what was asked for (at least one socket) and starts serving. */
        public SocketServer start() throws IOException {
            if (path == null && tcpAddress == null) {
                throw new IllegalStateException("a SocketServer needs a Unix socket, a TCP address, or both");
            }
            return new SocketServer(this);
        }
    }

    public static Builder builder(Supplier<Session.Handler> handlers) {
        return new Builder(handlers);
    }

    /** Binds {@code path} (a stale socket file is replaced) and starts accepting. */
    public SocketServer(Path path, Supplier<Session.Handler> handlers, int maxFrame) throws IOException {
        this(path, handlers, maxFrame, "", "rw-rw----");
    }

    /** The same with mode and group (see below), the default limits, and root as the only privileged peer. */
    public SocketServer(Path path, Supplier<Session.Handler> handlers, int maxFrame, String group, String mode)
            throws IOException {
        this(path, handlers, ServerLimits.defaults(maxFrame), Session.Peer::isRoot, group, mode);
    }

    /** A Unix socket only: see {@link Builder#unix}, {@link Builder#limits} and {@link Builder#privileged}. */
    public SocketServer(Path path, Supplier<Session.Handler> handlers, ServerLimits limits,
                        Predicate<Session.Peer> privileged, String group, String mode) throws IOException {
        this(builder(handlers).unix(path, group, mode).limits(limits).privileged(privileged));
    }

    private SocketServer(Builder b) throws IOException {
        this.path = b.path;
        this.limits = b.limits;
        this.chunks = Chunks.upTo(limits.maxBufferedInput());
        this.budget = new Budget(limits);
        this.tcp = b.tcpAddress == null ? null : new TcpLogin(b.authenticator, b.privileged, budget);
        ServerSocketChannel unix = null;
        ServerSocketChannel inet = null;
        try {
            unix = b.path == null ? null : Admission.bind(b.path, b.group, b.mode);
            inet = b.tcpAddress == null ? null : Admission.bind(b.tcpAddress);
            tcpAddress = inet == null ? null : (InetSocketAddress) inet.getLocalAddress();
            loop = new SelectorLoop(this, budget);
        } catch (IOException | RuntimeException e) {
            if (unix != null) {
                unix.close();
                Files.deleteIfExists(b.path); // ours: bound and renamed into place above
            }
            if (inet != null) {
                inet.close();
            }
            throw e;
        }
        workers = new Workers(limits.workers());
        if (unix != null) {
            doors.add(new Admission(this, unix, b.handlers, b.privileged, budget, loop, null));
        }
        if (inet != null) {
            doors.add(new Admission(this, inet, b.handlers, b.privileged, budget, loop, tcp));
        }
        loop.start();
        for (Admission d : doors) {
            d.start();
        }
    }

    /** The Unix socket's path. */
    public Path path() {
        if (path == null) {
            throw new IllegalStateException("this server listens on TCP only, at " + tcpAddress);
        }
        return path;
    }

    /** The TCP address bound: with its port when 0 was asked for. */
    public InetSocketAddress tcpAddress() {
        if (tcpAddress == null) {
            throw new IllegalStateException("this server listens on its Unix socket only, at " + path);
        }
        return tcpAddress;
    }

    public ServerLimits limits() {
        return limits;
    }

    /** {@code refused}: at accept (per-user limit, too many awaiting login) and at TCP login. */
    public Counters counters() {
        long accepted = 0;
        long refused = tcp == null ? 0 : tcp.refused();
        for (Admission d : doors) {
            accepted += d.accepted();
            refused += d.refused();
        }
        return new Counters(accepted, refused, budget.shed(), budget.timedOut());
    }

    // ---- a connection's hand-offs, from any thread ----

    /** Gives {@code c}'s next command (or its end) to a worker, or reads on if it was paused. */
    void dispatch(Connection c) {
        if (!workers.runNext(c) && c.shouldResumeReading(limits.maxFrame())) {
            loop.resumeReading(c);
        }
    }

    /**
     * On the selector thread, after a read or a write: what the session answers at once ({@link Session#quick})
     * is answered here, without a worker's wake-up, at most {@link #INLINE_RUN} commands in a row; the first
     * that needs a worker goes to one, and everything behind it waits for it (answers stay in order).
     * {@code direct}: the selector's buffer; {@code beforeWorker} (may be null) runs before a command goes to a worker.
     */
    void dispatchInline(Connection c, java.nio.ByteBuffer direct, BeforeWorker beforeWorker) throws IOException {
        boolean answered = false;
        try {
            for (int i = 0; ; i++) {
                Workers.Work w = workers.take(c); // null while a Work of c is queued or running
                if (w == null) {
                    if (c.shouldResumeReading(limits.maxFrame())) {
                        loop.resumeReading(c);
                    }
                    return;
                }
                // After INLINE_RUN answers, a client pipelining many gets the rest on a worker, so that the
                // selector serves the others; that Work, too, is preceded by the read that sees an end of stream.
                if (i >= INLINE_RUN || !c.inline(w)) {
                    try {
                        if (beforeWorker != null && w.frame() != null) {
                            beforeWorker.run();
                        }
                    } finally {
                        workers.run(w); // even when that read failed: the Work ends the session's command
                    }
                    if (jobStep(c.privileged(), w.frame())) {
                        Thread.yield(); // the job's record reaches the disk before this round's bookkeeping
                    }
                    return;
                }
                answered = true;
            }
        } finally {
            // The answers given here, in one write, after a command was handed on: a hook's INIT answer goes
            // out while its JOB_START's record is on its way to the disk. The connection's queue keeps the
            // order, whoever writes first (a worker's answer comes behind them).
            if (answered && !c.flush(direct)) {
                flushLater(c);
            }
        }
    }

    /**
     * A job's start or end from a privileged peer (a hook that execd or the job shell waits for): after it is
     * handed to a worker the selector yields its CPU, so that on a CPU the daemon shares the worker writes
     * the job's record, and starts the disk on it, before the selector's rest of the round (its register,
     * its next accepts). Measured with rsmapd on one CPU: 20-25 µs off each JOB_START and JOB_END
     * (docs/benchmarks.md). Where another CPU is idle the worker runs there and the yield returns at once.
     */
    static boolean jobStep(boolean privileged, Frame frame) {
        if (frame == null || !privileged) {
            return false;
        }
        int code = frame.code();
        return code == Code.JOB_START.value() || code == Code.JOB_END.value();
    }

    /** What the selector does before it gives a command to a worker (see {@link SelectorLoop}). */
    interface BeforeWorker {
        void run() throws IOException;
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
        for (Admission d : doors) {
            d.stop(); // ends its accept thread, or takes its listener off the selector
        }
        loop.stop();
        workers.stop();
        if (path != null) {
            Files.deleteIfExists(path);
        }
    }
}
