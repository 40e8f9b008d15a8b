// A client of rsmapd's agent protocol, for the rsmap command line: connect, INIT, one command at a time.
package rsmap.wire;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/** One connection; {@link #call} sends a command and collects its events up to its OK or ERROR. */
public final class Client implements AutoCloseable {
    /** The daemon answered ERROR: its reason. */
    public static final class Refusal extends Exception {
        private static final long serialVersionUID = 1L;

        public Refusal(String reason) {
            super(reason, null, false, false);
        }
    }

    /** The server is not one a client of rsmapd may believe (see {@link TrustedServer}): nothing was sent. */
    public static final class Untrusted extends IOException {
        private static final long serialVersionUID = 1L;

        public Untrusted(String reason) {
            super(reason);
        }
    }

    private final SocketChannel channel;
    private final FrameDecoder decoder = new FrameDecoder(64 << 20);
    private final ByteBuffer in = ByteBuffer.allocate(64 * 1024);
    private long tid;

    private Client(SocketChannel channel) {
        this.channel = channel;
    }

    /** Connects to {@code socket}, checks that the server is rsmapd's ({@link TrustedServer#installed()}), sends INIT. */
    public static Client connect(Path socket) throws IOException, Refusal {
        return connect(socket, TrustedServer.installed());
    }

    /** Connects to {@code socket}, checks the server's uid against {@code trust}, sends INIT. */
    public static Client connect(Path socket, TrustedServer trust) throws IOException, Refusal {
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            ch.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            ch.close();
            throw new IOException("cannot reach rsmapd at " + socket + ": " + (e.getMessage() == null ? e : e.getMessage()),
                    e);
        }
        Optional<String> untrusted = untrusted(ch, socket, trust);
        if (untrusted.isPresent()) {
            ch.close();
            throw new Untrusted(untrusted.get());
        }
        Client c = new Client(ch);
        c.call(Code.INIT, Session.VERSION);
        return c;
    }

    private static Optional<String> untrusted(SocketChannel ch, Path socket, TrustedServer trust) {
        Optional<PeerCredentials.Ids> server = PeerCredentials.ofServer(ch);
        if (server.isEmpty()) {
            return Optional.of("not trusting the server at " + socket + ": the kernel does not say who it is"
                    + (PeerCredentials.UNAVAILABLE.isEmpty() ? "" : " (" + PeerCredentials.UNAVAILABLE + ")"));
        }
        if (server.get().pid() == ProcessHandle.current().pid()) {
            return Optional.empty(); // a daemon inside this very JVM: rsmap demo, the class-data training run
        }
        return trust.refusal(socket, server.get().uid() & 0xffffffffL);
    }

    /** The events of one command before its OK; ERROR becomes a {@link Refusal}. */
    public List<Frame> call(Code code, String... args) throws IOException, Refusal {
        List<Frame> events = new ArrayList<>();
        stream(code, events::add, args);
        return events;
    }

    /**
     * Sends a command and hands every event to {@code sink} until its OK (returns) or ERROR (throws):
     * for START_EVENTS, until the stream ends.
     */
    public void stream(Code code, Consumer<Frame> sink, String... args) throws IOException, Refusal {
        long t = ++tid;
        ByteBuffer out = ByteBuffer.wrap(Frame.of(t, code.value(), args).encode());
        while (out.hasRemaining()) {
            channel.write(out);
        }
        while (true) {
            Frame f = next();
            if (f.tid() != t) {
                continue; // a finished transaction's late event: dropped (seed 004)
            }
            if (f.code() == Code.OK.value()) {
                return;
            }
            if (f.code() == Code.ERROR.value()) {
                throw new Refusal(f.args().isEmpty() ? "(no reason given)" : f.text(0));
            }
            sink.accept(f);
        }
    }

    private Frame next() throws IOException {
        while (true) {
            Optional<Frame> f;
            try {
                f = decoder.next();
            } catch (FrameException e) {
                throw new IOException("rsmapd sent a bad frame: " + e.getMessage(), e);
            }
            if (f.isPresent()) {
                return f.get();
            }
            in.clear();
            int n = channel.read(in);
            if (n < 0) {
                throw new IOException("rsmapd closed the connection");
            }
            decoder.feed(in.array(), 0, n);
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
