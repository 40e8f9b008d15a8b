// A door of the SocketServer: binds its socket, accepts every connection as it arrives and judges its peer
// (SO_PEERCRED) against the per-user limit before it is served - on the selector thread for the Unix
// socket, on a thread of its own for TCP, where it counts each peer against the logins awaited instead.
package rsmap.wire;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.Supplier;
import rsmap.log.Log;

/**
 * The Unix socket's connections are accepted by the selector thread itself, at most
 * {@link #ACCEPTS_A_ROUND} a round, and read at once: a job start's hook then costs one thread wake-up
 * less (the accept thread's hand-off to the selector was 50-70 µs of a prolog's 450-550 in rsmapd, on a
 * 2-core VM), and a privileged peer's connect waits behind at most the short listen backlog, drained a
 * few rounds. A flood of connects now shares the selector's rounds with reads: in CI's FloodIT, root's
 * JOB_START while nobody floods took p50 1.4-5.4 ms and p99 8-13 ms, against 1.4-3.9 ms and 9-17 ms with
 * the accept thread. TCP keeps a thread of its own: a cluster's hosts reconnecting at once after a restart are a
 * thousand connects a second. A TCP peer is judged again at its INIT ({@link TcpLogin}), on a worker.
 */
final class Admission {
    /**
     * Connections the kernel queues before accept. Short on purpose: a privileged peer's connect waits
     * behind every queued one, and a flooding peer keeps the queue full (at 4096, root waited ~400 ms
     * behind 10,000 idle connections of nobody); a client finding it full sleeps in connect until accept
     * makes room.
     */
    private static final int BACKLOG = 64;
    /** Connections the selector accepts a round, at most: a flood of connects shares the rounds with reads. */
    private static final int ACCEPTS_A_ROUND = 16;
    /**
     * Over TCP every peer is no one until its login, so no one is kept waiting behind it; a cluster's
     * hosts reconnecting at once after a restart should not wait out SYN retransmits (1 s, 3 s, ...).
     */
    private static final int TCP_BACKLOG = 1024;

    private final SocketServer server;
    private final ServerSocketChannel listener;
    private final Supplier<Session.Handler> handlers;
    private final Predicate<Session.Peer> privileged;
    private final Budget budget;
    private final SelectorLoop loop;
    /** Null for the Unix socket. */
    private final TcpLogin tcp;
    private final Thread thread;
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private volatile boolean running = true;

    Admission(SocketServer server, ServerSocketChannel listener, Supplier<Session.Handler> handlers,
              Predicate<Session.Peer> privileged, Budget budget, SelectorLoop loop, TcpLogin tcp) {
        this.server = server;
        this.listener = listener;
        this.handlers = handlers;
        this.privileged = privileged;
        this.budget = budget;
        this.loop = loop;
        this.tcp = tcp;
        this.thread = new Thread(this::accept, tcp == null ? "rsmapd-accept" : "rsmapd-accept-tcp");
        thread.setDaemon(true);
    }

    /**
     * Binds {@code path} with {@code mode} and, unless empty, group {@code group}: the socket is bound
     * under a temporary name, given its mode and group, then renamed into place, so that no client ever
     * connects through wider permissions. A stale socket file at {@code path} is replaced.
     */
    static ServerSocketChannel bind(Path path, String group, String mode) throws IOException {
        Path dir = path.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path temp = dir.resolve("." + path.getFileName() + "." + ProcessHandle.current().pid());
        Files.deleteIfExists(temp);
        ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            listener.bind(UnixDomainSocketAddress.of(temp), BACKLOG);
            Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString(mode));
            if (!group.isEmpty()) {
                var lookup = temp.getFileSystem().getUserPrincipalLookupService();
                Files.getFileAttributeView(temp, PosixFileAttributeView.class)
                        .setGroup(lookup.lookupPrincipalByGroupName(group));
            }
            Files.move(temp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            listener.close();
            Files.deleteIfExists(temp);
            throw e;
        }
        return listener;
    }

    /** Binds {@code address} (port 0: an ephemeral one) for TCP peers. */
    static ServerSocketChannel bind(InetSocketAddress address) throws IOException {
        ServerSocketChannel listener = ServerSocketChannel.open();
        try {
            listener.setOption(StandardSocketOptions.SO_REUSEADDR, true); // a restart beside connections in TIME_WAIT
            listener.bind(address, TCP_BACKLOG);
        } catch (IOException e) {
            listener.close();
            throw e;
        }
        return listener;
    }

    void start() throws IOException {
        if (tcp != null) {
            thread.start();
            return;
        }
        listener.configureBlocking(false);
        loop.listen(listener, this);
    }

    /** The selector thread's buffer for a refusal (see {@link #tell}). */
    private final ByteBuffer refusal = ByteBuffer.allocateDirect(1024);
    /**
     * A streak of failed accepts ends only when none has failed for this long: a descriptor freed for a
     * moment in the middle of one lets a single queued connection through, and the next accept fails again.
     */
    private static final long STREAK_GAP_NANOS = TimeUnit.SECONDS.toNanos(10);
    /**
     * When an accept last failed (System.nanoTime), on the one thread that accepts for this door; before the
     * first, a gap ago, so that the first failure starts a streak.
     */
    private long lastFailure = System.nanoTime() - STREAK_GAP_NANOS - 1;

    /**
     * On the selector thread, its listener ready: accepts and judges what the kernel queued, at most
     * {@link #ACCEPTS_A_ROUND}; false when accept failed (out of file descriptors, say), and the selector should
     * stop asking for a tick, letting the connections already open be served.
     */
    boolean acceptReady() {
        for (int i = 0; i < ACCEPTS_A_ROUND; i++) {
            SocketChannel ch;
            try {
                ch = listener.accept();
            } catch (IOException e) {
                if (running && listener.isOpen()) {
                    acceptFailed(e);
                }
                return false;
            }
            if (ch == null) {
                return true;
            }
            judge(ch, refusal);
        }
        return true;
    }

    /**
     * An accept failed: said once, at the start of a streak (it is retried every tick); a streak is failures
     * no more than {@link #STREAK_GAP_NANOS} apart, whatever was accepted between them.
     */
    private void acceptFailed(IOException e) {
        long now = System.nanoTime();
        if (now - lastFailure > STREAK_GAP_NANOS) {
            Log.report("cannot accept connections (retried every tick)", e);
        }
        lastFailure = now;
    }

    /** Judges a connection just accepted; one connection's trouble never stops the door for the others. */
    private void judge(SocketChannel ch, ByteBuffer out) {
        try {
            if (tcp == null) {
                admit(ch, out);
            } else {
                admitTcp(ch, out);
            }
        } catch (RuntimeException e) {
            Log.report("cannot admit a connection", e);
            closeQuietly(ch);
        }
    }

    /** Closes the socket, which ends the accept thread (or takes it off the selector). */
    void stop() throws IOException {
        running = false;
        listener.close();
    }

    long accepted() {
        return accepted.get();
    }

    long refused() {
        return refused.get();
    }

    /**
     * TCP: accepts and judges every connection as soon as it arrives: the selector's rounds never wait for
     * a flood of connects.
     */
    private void accept() {
        ByteBuffer out = ByteBuffer.allocateDirect(1024);
        while (running) {
            SocketChannel ch;
            try {
                ch = listener.accept();
            } catch (IOException e) {
                if (!running || !listener.isOpen()) {
                    return;
                }
                acceptFailed(e);
                try { // out of file descriptors, say: let the connections already open be served a while
                    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(SelectorLoop.TICK_NANOS));
                } catch (InterruptedException stop) {
                    return;
                }
                continue;
            }
            judge(ch, out);
        }
    }

    /**
     * A TCP peer holds one of {@link ServerLimits#maxUnauthenticated} places until its login ends (or the
     * login timeout), at most a sixteenth of them per source address ({@link LoginPlaces}); with none left
     * it gets one ERROR and is closed.
     */
    private void admitTcp(SocketChannel ch, ByteBuffer out) {
        java.net.InetAddress source = LoginPlaces.sourceOf(ch);
        String full = budget.awaitLogin(source);
        if (full != null) {
            refused.incrementAndGet();
            tell(ch, Session.error(0, full, Category.BUSY), out);
            closeQuietly(ch);
            return;
        }
        try {
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true); // small frames, one answer each: no Nagle delay
            ch.setOption(StandardSocketOptions.SO_KEEPALIVE, true); // a host gone without a FIN is found out
            ch.configureBlocking(false);
        } catch (IOException e) {
            budget.loginEnded(source);
            closeQuietly(ch);
            return;
        }
        Connection c = new Connection(server, ch, handlers.get(), tcp, server.limits().maxFrame(), source);
        accepted.incrementAndGet();
        loop.register(c);
    }

    /** Judges a new peer at once: over its user's limit it gets one ERROR and is closed. */
    private void admit(SocketChannel ch, ByteBuffer out) {
        Object user = null;
        try {
            Session.Peer peer = PeerCredentials.of(ch);
            boolean priv = privileged.test(peer);
            if (!priv) {
                Object uid = Budget.bucket(peer);
                if (!budget.open(uid)) {
                    refused.incrementAndGet();
                    tell(ch, Session.error(0, budget.tooMany(peer), Category.BUSY), out);
                    ch.close();
                    return;
                }
                user = uid;
            }
            ch.configureBlocking(false);
            Connection c = new Connection(server, ch, new Session(handlers.get(), peer), priv, user,
                    server.limits().maxFrame());
            accepted.incrementAndGet();
            loop.register(c);
        } catch (IOException e) {
            if (user != null) {
                budget.release(user);
            }
            closeQuietly(ch);
        }
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // it was never served
        }
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
}
