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
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

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

    /** Binds {@code path} (a stale socket file is replaced) and starts accepting. */
    public SocketServer(Path path, Supplier<Session.Handler> handlers, int maxFrame) throws IOException {
        this.path = path;
        this.handlers = handlers;
        this.maxFrame = maxFrame;
        Files.deleteIfExists(path);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(path));
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
        Session session = new Session(handlers.get(), peer(client));
        FrameDecoder decoder = new FrameDecoder(maxFrame);
        ByteBuffer in = ByteBuffer.allocate(64 * 1024);
        try (client) {
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
                    for (Frame f : answer) {
                        ByteBuffer out = ByteBuffer.wrap(f.encode());
                        while (out.hasRemaining()) {
                            client.write(out);
                        }
                    }
                }
            }
        } catch (IOException e) {
            // the client went away: nothing to answer
        }
    }

    /** The peer's user and group as the kernel reports them (SO_PEERCRED). */
    static Session.Peer peer(SocketChannel client) {
        try {
            UnixDomainPrincipal p = client.getOption(ExtendedSocketOptions.SO_PEERCRED);
            return new Session.Peer(p.user().getName(), p.group().getName());
        } catch (IOException | UnsupportedOperationException e) {
            return Session.Peer.UNKNOWN;
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
