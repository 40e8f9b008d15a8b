// The Unix socket server of rsmapd: one thread accepts and judges peers, one selector thread reads and
// writes for every connection, a few workers execute commands; ServerLimits bounds what a peer can hold.
package rsmap.wire;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
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
 */
public final class SocketServer implements AutoCloseable {
    private static final int BUFFER = 64 * 1024;
    /**
     * Connections the kernel queues before accept. Short on purpose: a privileged peer's connect waits
     * behind every queued one, and a flooding peer keeps the queue full (at 4096, root waited ~400 ms
     * behind 10,000 idle connections of nobody); a client finding it full sleeps in connect until accept
     * makes room.
     */
    private static final int BACKLOG = 64;
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long TRIM_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final long CLOSE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** A connection whose unread answers exceed this gets its next command once the client has read. */
    private static final long PAUSE_OUTPUT = 256 * 1024;

    /** How the budget was used since start: for logs and tests. */
    public record Counters(long accepted, long refused, long shed, long timedOut) {
    }

    private final Path path;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final Thread loop;
    private final Thread acceptor;
    private final ThreadPoolExecutor workers;
    private final Supplier<Session.Handler> handlers;
    private final ServerLimits limits;
    private final Predicate<Session.Peer> privileged;
    private final ConcurrentLinkedQueue<Runnable> pending = new ConcurrentLinkedQueue<>();
    private final AtomicLong input = new AtomicLong();
    private final AtomicLong output = new AtomicLong();
    private final AtomicLong seq = new AtomicLong();
    private final AtomicBoolean shedScheduled = new AtomicBoolean();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong shed = new AtomicLong();
    private final AtomicLong timedOut = new AtomicLong();
    private volatile boolean running = true;

    /** Where every decoder's bytes are held: recycled, and given back a while after a flood. */
    private final Chunks chunks;
    /** Open connections of each unprivileged uid: counted up by the acceptor, down by the selector. */
    private final Map<Object, Integer> perUser = new ConcurrentHashMap<>();

    // Owned by the selector thread.
    private final Set<Connection> connections = new LinkedHashSet<>();
    private final ByteBuffer direct = ByteBuffer.allocateDirect(BUFFER);

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
        this.handlers = handlers;
        this.limits = limits;
        this.privileged = privileged;
        this.chunks = Chunks.upTo(limits.maxBufferedInput());
        Path dir = path.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path temp = dir.resolve("." + path.getFileName() + "." + ProcessHandle.current().pid());
        Files.deleteIfExists(temp);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            server.bind(UnixDomainSocketAddress.of(temp), BACKLOG);
            Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString(mode));
            if (!group.isEmpty()) {
                var lookup = temp.getFileSystem().getUserPrincipalLookupService();
                Files.getFileAttributeView(temp, PosixFileAttributeView.class)
                        .setGroup(lookup.lookupPrincipalByGroupName(group));
            }
            Files.move(temp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            selector = Selector.open();
        } catch (IOException e) {
            server.close();
            Files.deleteIfExists(temp);
            throw e;
        }
        AtomicLong n = new AtomicLong();
        workers = new ThreadPoolExecutor(limits.workers(), limits.workers(), 0, TimeUnit.SECONDS,
                new PriorityBlockingQueue<>(), r -> new Worker(r, "rsmapd-worker-" + n.incrementAndGet()));
        workers.prestartAllCoreThreads(); // every Work goes through the queue, in its priority
        loop = new Thread(this::loop, "rsmapd-selector");
        loop.setDaemon(true);
        loop.start();
        acceptor = new Thread(this::accept, "rsmapd-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A worker thread with its own direct buffer for writing answers. */
    private static final class Worker extends Thread {
        final ByteBuffer direct = ByteBuffer.allocateDirect(BUFFER);

        Worker(Runnable r, String name) {
            super(r, name);
            setDaemon(true);
        }
    }

    public Path path() {
        return path;
    }

    public ServerLimits limits() {
        return limits;
    }

    public Counters counters() {
        return new Counters(accepted.get(), refused.get(), shed.get(), timedOut.get());
    }

    // ---- the selector thread ----

    private void loop() {
        long lastSweep = System.nanoTime();
        long lastTrim = lastSweep;
        try {
            while (running) {
                selector.select(this::ready, TimeUnit.NANOSECONDS.toMillis(TICK_NANOS));
                for (Runnable r = pending.poll(); r != null; r = pending.poll()) {
                    try {
                        r.run();
                    } catch (RuntimeException e) {
                        // one connection's trouble (a key cancelled under it): the loop serves the others
                    }
                }
                long now = System.nanoTime();
                if (now - lastSweep >= TICK_NANOS) {
                    lastSweep = now;
                    sweep(now);
                }
                if (now - lastTrim >= TRIM_NANOS) {
                    lastTrim = now;
                    chunks.trim();
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            // the server is closing
        } finally {
            for (Connection c : new ArrayList<>(connections)) {
                kill(c, null);
            }
            try {
                selector.close();
            } catch (IOException e) {
                // closing: nothing more to do
            }
        }
    }

    /** One ready key, handled once per round so that every connection gets its turn. */
    private void ready(SelectionKey key) {
        Connection c = (Connection) key.attachment();
        try {
            if (key.isValid() && key.isWritable()) {
                writable(c);
            }
            if (key.isValid() && key.isReadable()) {
                readable(c);
            }
        } catch (IOException | RuntimeException e) {
            kill(c, null); // the client is gone (or broke something): the loop goes on
        }
    }

    /** An admitted connection joins the selector. */
    private void register(Connection c) {
        try {
            c.key = c.channel.register(selector, SelectionKey.OP_READ, c);
            connections.add(c);
        } catch (IOException | RuntimeException e) {
            kill(c, null);
        }
    }

    // ---- the accept thread ----

    /**
     * Accepts and judges every connection as soon as it arrives, on a thread of its own: the selector's
     * rounds never wait for a flood of connects, and a privileged peer's connect waits only behind the
     * few the kernel queued (see {@link #BACKLOG}).
     */
    private void accept() {
        ByteBuffer out = ByteBuffer.allocateDirect(1024);
        while (running) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (IOException e) {
                if (!running || !server.isOpen()) {
                    return;
                }
                try { // out of file descriptors, say: let the connections already open be served a while
                    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(TICK_NANOS));
                } catch (InterruptedException stop) {
                    return;
                }
                continue;
            }
            admit(ch, out);
        }
    }

    /** Judges a new peer at once: over its user's limit it gets one ERROR and is closed. */
    private void admit(SocketChannel ch, ByteBuffer out) {
        Object user = null;
        try {
            Session.Peer peer = PeerCredentials.of(ch);
            boolean priv = privileged.test(peer);
            if (!priv) {
                Object uid = peer.uid() >= 0 ? (Object) peer.uid() : peer.user();
                int limit = limits.perUserConnections();
                if (perUser.merge(uid, 1, Integer::sum) > limit) {
                    release(uid);
                    refused.incrementAndGet();
                    tell(ch, Session.error(0, "too many connections of user '" + peer.user() + "' (uid " + peer.uid()
                            + "): the limit is " + limit + " per user"), out);
                    ch.close();
                    return;
                }
                user = uid;
            }
            ch.configureBlocking(false);
            Connection c = new Connection(this, ch, new Session(handlers.get(), peer), priv, user, limits.maxFrame());
            accepted.incrementAndGet();
            onSelector(() -> register(c));
        } catch (IOException e) {
            if (user != null) {
                release(user);
            }
            try {
                ch.close();
            } catch (IOException ignored) {
                // it was never served
            }
        }
    }

    private void readable(Connection c) throws IOException {
        int n = c.read(direct);
        if (n < 0) {
            c.key.interestOpsAnd(~SelectionKey.OP_READ);
        }
        dispatch(c);
        if (n >= 0 && c.shouldPauseReading(limits.maxFrame())) {
            c.key.interestOpsAnd(~SelectionKey.OP_READ);
        }
        if (input.get() > limits.maxBufferedInput()) {
            shedInput();
        }
    }

    private void writable(Connection c) throws IOException {
        c.writeServed();
        if (c.flush(direct)) {
            c.key.interestOpsAnd(~SelectionKey.OP_WRITE);
            if (c.closingAndFlushed()) {
                kill(c, null);
            } else {
                dispatch(c); // the next command may have waited for the client to read
            }
        } else {
            c.key.interestOpsOr(SelectionKey.OP_WRITE);
        }
    }

    /** Closes the connections whose time is up, and sheds output beyond the budget. */
    private void sweep(long now) {
        long idle = limits.idleTimeout().toNanos();
        long frame = limits.frameTimeout().toNanos();
        for (Connection c : new ArrayList<>(connections)) {
            String why = c.expired(now, idle, frame);
            if (why == null) {
                continue;
            }
            switch (why) {
                case "idle":
                    timedOut.incrementAndGet();
                    kill(c, "idle for " + seconds(limits.idleTimeout()) + ": the connection is closed");
                    break;
                case "frame":
                    timedOut.incrementAndGet();
                    kill(c, "a frame was not complete within " + seconds(limits.frameTimeout())
                            + ": the connection is closed");
                    break;
                default:
                    kill(c, null); // closing, and the client did not read its last answers in time
            }
        }
        shedOutput();
    }

    private static String seconds(java.time.Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + " s" : String.format(java.util.Locale.ROOT, "%.1f s", ms / 1000.0);
    }

    /** Input beyond the budget: the unprivileged connections holding most are closed until it fits. */
    private void shedInput() {
        while (input.get() > limits.maxBufferedInput()) {
            Connection worst = largest(true);
            if (worst == null) {
                return; // only privileged peers hold input: they are never shed
            }
            shed.incrementAndGet();
            kill(worst, "rsmapd holds more partial frames than its budget of " + limits.maxBufferedInput()
                    + " bytes; this connection held the most (" + worst.inputHeld() + " bytes) and is closed");
        }
    }

    private void shedOutput() {
        shedScheduled.set(false);
        while (output.get() > limits.maxQueuedOutput()) {
            Connection worst = largest(false);
            if (worst == null) {
                return;
            }
            shed.incrementAndGet();
            kill(worst, null); // it does not read: an ERROR would only wait behind the rest
        }
    }

    private Connection largest(boolean ofInput) {
        Connection worst = null;
        long most = 0;
        for (Connection c : connections) {
            long held = ofInput ? c.inputHeld() : c.outputHeld();
            if (!c.privileged && held > most) {
                worst = c;
                most = held;
            }
        }
        return worst;
    }

    /**
     * Closes {@code c} now, after one best-effort ERROR with TID 0 giving {@code reason} (unless null, or
     * a frame is half written); a worker then ends its session.
     */
    private void kill(Connection c, String reason) {
        if (!c.die(reason == null ? null : Session.error(0, reason), direct)) {
            return;
        }
        connections.remove(c);
        if (c.user != null) {
            release(c.user);
        }
        if (c.key != null) {
            c.key.cancel();
        }
        try {
            c.channel.close();
        } catch (IOException e) {
            // already gone
        }
        dispatch(c);
    }

    private void release(Object user) {
        perUser.computeIfPresent(user, (u, n) -> n <= 1 ? null : n - 1);
    }

    /** Writes one small frame to a fresh connection: nothing is in flight on it, so this never waits. */
    private static void tell(SocketChannel ch, Frame frame, ByteBuffer out) {
        out.clear();
        byte[] b = frame.encode();
        out.put(b, 0, Math.min(b.length, out.capacity())).flip();
        try {
            ch.write(out);
        } catch (IOException e) {
            // the peer is gone already
        }
    }

    // ---- any thread ----

    /** Runs {@code r} on the selector thread: now if this is it, else at its next round. */
    private void onSelector(Runnable r) {
        if (Thread.currentThread() == loop) {
            r.run();
        } else {
            pending.add(r);
            selector.wakeup();
        }
    }

    /** Gives {@code c}'s next command (or its end) to a worker, or reads on if it was paused. */
    void dispatch(Connection c) {
        Connection.Work w = c.next(seq.incrementAndGet());
        if (w != null) {
            try {
                workers.execute(w);
            } catch (RejectedExecutionException e) {
                // the server is closing
            }
        } else if (c.shouldResumeReading(limits.maxFrame())) {
            onSelector(() -> {
                if (c.key.isValid()) {
                    c.key.interestOpsOr(SelectionKey.OP_READ);
                }
            });
        }
    }

    /** A worker's Work failed outside the session's own handling: the connection goes, its session ends. */
    void failed(Connection c) {
        onSelector(() -> kill(c, null));
    }

    /** After a command: the worker writes its answers itself; what the socket does not take, the selector does. */
    void flushFromWorker(Connection c) {
        if (!(Thread.currentThread() instanceof Worker w)) {
            flushLater(c);
            return;
        }
        try {
            if (!c.flush(w.direct)) {
                flushLater(c);
            }
        } catch (IOException e) {
            onSelector(() -> kill(c, null));
        }
    }

    /** Asks the selector to write {@code c}'s queue when the socket can take it. */
    void flushLater(Connection c) {
        if (c.wantWrite()) {
            onSelector(() -> {
                if (c.key.isValid()) {
                    c.key.interestOpsOr(SelectionKey.OP_WRITE);
                }
            });
        }
    }

    /** The session is over: close once its last answers are written, or after a grace period. */
    void closeWhenFlushed(Connection c) {
        if (c.startClosing(CLOSE_GRACE_NANOS)) {
            if (c.closingAndFlushed()) {
                onSelector(() -> kill(c, null));
            } else {
                flushLater(c);
            }
        }
    }

    Chunks chunks() {
        return chunks;
    }

    long pauseOutput() {
        return Math.min(PAUSE_OUTPUT, limits.maxEventBacklog());
    }

    long outputTotal() {
        return output.get();
    }

    void addOutput(long bytes) {
        if (output.addAndGet(bytes) > limits.maxQueuedOutput() && bytes > 0 && !shedScheduled.getAndSet(true)) {
            onSelector(this::shedOutput);
        }
    }

    void addInput(long bytes) {
        input.addAndGet(bytes);
    }

    @Override
    public void close() throws IOException {
        running = false;
        server.close(); // ends the accept thread
        selector.wakeup();
        try {
            loop.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server.close();
        workers.shutdownNow();
        try {
            workers.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Files.deleteIfExists(path);
    }
}
