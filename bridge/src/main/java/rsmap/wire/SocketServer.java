// The Unix socket server of rsmapd: many concurrent clients, each connection read by its own thread,
// frames decoded incrementally and answered through a Session.
package rsmap.wire;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Listens on a Unix socket. A connection ends on QUIT, on a frame that cannot be delimited (after its
 * ERROR), or when the client goes away; a slow client never blocks another.
 */
public final class SocketServer implements AutoCloseable {
    private final Path path;
    private final ServerSocketChannel server;
    private final ExecutorService workers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "rsmapd-client");
        t.setDaemon(true);
        return t;
    });
    private final Supplier<Session.Handler> handlers;
    private final int maxFrame;
    /** Bytes of events that may wait for one slow client before its stream is dropped. */
    private final long maxQueued = Long.getLong("rsmap.maxEventBacklog", 16L << 20);

    /** Binds {@code path} (a stale socket file is replaced) and starts accepting. */
    public SocketServer(Path path, Supplier<Session.Handler> handlers, int maxFrame) throws IOException {
        this(path, handlers, maxFrame, "", "rw-rw----");
    }

    /**
     * Binds {@code path} with {@code mode} (like {@code rw-rw----}) and, unless empty, group {@code group}:
     * the socket is bound under a temporary name, given its mode and group, then renamed into place, so
     * that no client ever connects through wider permissions.
     */
    public SocketServer(Path path, Supplier<Session.Handler> handlers, int maxFrame, String group, String mode)
            throws IOException {
        this.path = path;
        this.handlers = handlers;
        this.maxFrame = maxFrame;
        Path dir = path.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path temp = dir.resolve("." + path.getFileName() + "." + ProcessHandle.current().pid());
        Files.deleteIfExists(temp);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            server.bind(UnixDomainSocketAddress.of(temp));
            Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString(mode));
            if (!group.isEmpty()) {
                var lookup = temp.getFileSystem().getUserPrincipalLookupService();
                Files.getFileAttributeView(temp, PosixFileAttributeView.class)
                        .setGroup(lookup.lookupPrincipalByGroupName(group));
            }
            Files.move(temp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            server.close();
            Files.deleteIfExists(temp);
            throw e;
        }
        workers.execute(this::accept);
    }

    public Path path() {
        return path;
    }

    private void accept() {
        while (server.isOpen()) {
            try {
                SocketChannel client = server.accept();
                workers.execute(() -> serve(client));
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (!server.isOpen()) {
                    return;
                }
            }
        }
    }

    private void serve(SocketChannel client) {
        Session session = new Session(handlers.get(), PeerCredentials.of(client));
        Outbox outbox = new Outbox(client);
        session.attach(outbox);
        FrameDecoder decoder = new FrameDecoder(maxFrame);
        ByteBuffer in = ByteBuffer.allocate(64 * 1024);
        try {
            while (!session.closed()) {
                in.clear();
                int n = client.read(in);
                if (n < 0) {
                    return;
                }
                decoder.feed(in.array(), 0, n);
                while (!session.closed()) {
                    List<Frame> answer;
                    try {
                        var frame = decoder.next();
                        if (frame.isEmpty()) {
                            break;
                        }
                        answer = session.onCommand(frame.get());
                    } catch (FrameException e) {
                        answer = List.of(session.onBadFrame(e));
                    }
                    outbox.sendNow(answer);
                }
            }
        } catch (IOException e) {
            // the client went away: nothing to answer
        } finally {
            session.end();
            outbox.finish();
            try {
                client.close();
            } catch (IOException e) {
                // closing a dead connection: nothing to do
            }
        }
    }

    /**
     * The frames going to one client, in order: the answers of its commands (written by its reader
     * thread) and the events of its stream (queued by the daemon, written by a pool thread), so that a
     * client that stops reading blocks neither the daemon nor any other client. Events beyond
     * {@code maxQueued} bytes (system property {@code rsmap.maxEventBacklog}, default 16 MiB) are refused;
     * the daemon then ends that stream.
     */
    private final class Outbox implements Session.Output {
        private final SocketChannel channel;
        private final ArrayDeque<ByteBuffer> queue = new ArrayDeque<>();
        private long queued;
        private boolean draining;
        private boolean dead;

        Outbox(SocketChannel channel) {
            this.channel = channel;
        }

        @Override
        public boolean post(Frame frame, boolean force) {
            if (!offer(List.of(frame), force)) {
                return false;
            }
            if (claim()) {
                try {
                    workers.execute(this::drain);
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    synchronized (this) { // the server is closing: nothing more goes out
                        dead = true;
                        draining = false;
                        queue.clear();
                        notifyAll();
                    }
                    return false;
                }
            }
            return true;
        }

        void sendNow(List<Frame> frames) {
            if (offer(frames, true) && claim()) {
                drain();
            }
        }

        private synchronized boolean offer(List<Frame> frames, boolean force) {
            if (dead) {
                return false;
            }
            List<ByteBuffer> encoded = new ArrayList<>(frames.size());
            long size = 0;
            for (Frame f : frames) {
                ByteBuffer b = ByteBuffer.wrap(f.encode());
                encoded.add(b);
                size += b.remaining();
            }
            if (!force && queued + size > maxQueued) {
                return false;
            }
            queue.addAll(encoded);
            queued += size;
            return true;
        }

        private synchronized boolean claim() {
            if (draining || queue.isEmpty()) {
                return false;
            }
            draining = true;
            return true;
        }

        private void drain() {
            for (;;) {
                ByteBuffer b;
                synchronized (this) {
                    b = queue.poll();
                    if (b == null) {
                        draining = false;
                        notifyAll();
                        return;
                    }
                }
                try {
                    while (b.hasRemaining()) {
                        channel.write(b);
                    }
                } catch (IOException e) {
                    synchronized (this) {
                        dead = true;
                        queue.clear();
                        queued = 0;
                        draining = false;
                        notifyAll();
                    }
                    return;
                }
                synchronized (this) {
                    queued -= b.capacity();
                }
            }
        }

        /** Waits (a little) until what was queued is written; then the connection may close. */
        synchronized void finish() {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while ((draining || !queue.isEmpty()) && !dead && System.nanoTime() < until) {
                if (!draining && claim()) {
                    try {
                        workers.execute(this::drain);
                    } catch (java.util.concurrent.RejectedExecutionException e) {
                        break;
                    }
                }
                try {
                    wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            dead = true;
            queue.clear();
        }
    }

    @Override
    public void close() throws IOException {
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
