// The door of the SocketServer: binds its socket, and on a thread of its own accepts every connection as
// it arrives and judges its peer (SO_PEERCRED) against the per-user limit before the selector sees it.
package rsmap.wire;

import java.io.IOException;
import java.net.StandardProtocolFamily;
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

/**
 * Judging on a thread of its own means a flood of connects neither slows the selector's rounds nor keeps
 * a privileged peer's connect waiting behind more than the short listen backlog.
 */
final class Admission {
    /**
     * Connections the kernel queues before accept. Short on purpose: a privileged peer's connect waits
     * behind every queued one, and a flooding peer keeps the queue full (at 4096, root waited ~400 ms
     * behind 10,000 idle connections of nobody); a client finding it full sleeps in connect until accept
     * makes room.
     */
    private static final int BACKLOG = 64;

    private final SocketServer server;
    private final ServerSocketChannel listener;
    private final Supplier<Session.Handler> handlers;
    private final Predicate<Session.Peer> privileged;
    private final Budget budget;
    private final SelectorLoop loop;
    private final Thread thread;
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private volatile boolean running = true;

    Admission(SocketServer server, ServerSocketChannel listener, Supplier<Session.Handler> handlers,
              Predicate<Session.Peer> privileged, Budget budget, SelectorLoop loop) {
        this.server = server;
        this.listener = listener;
        this.handlers = handlers;
        this.privileged = privileged;
        this.budget = budget;
        this.loop = loop;
        this.thread = new Thread(this::accept, "rsmapd-accept");
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

    void start() {
        thread.start();
    }

    /** Closes the socket, which ends the accept thread. */
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
     * Accepts and judges every connection as soon as it arrives: the selector's rounds never wait for a
     * flood of connects, and a privileged peer's connect waits only behind the few the kernel queued (see
     * {@link #BACKLOG}).
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
                try { // out of file descriptors, say: let the connections already open be served a while
                    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(SelectorLoop.TICK_NANOS));
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
                if (!budget.open(uid)) {
                    refused.incrementAndGet();
                    tell(ch, Session.error(0, "too many connections of user '" + peer.user() + "' (uid " + peer.uid()
                            + "): the limit is " + server.limits().perUserConnections() + " per user"), out);
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
            try {
                ch.close();
            } catch (IOException ignored) {
                // it was never served
            }
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
