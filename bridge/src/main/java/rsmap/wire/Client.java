// A client of rsmapd's agent protocol: connect (Unix socket for the rsmap command line, TCP with a credential
// for a host daemon talking to its authority), INIT, one command at a time.
package rsmap.wire;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One connection; {@link #call} sends a command and collects its events up to its OK or ERROR. Not
 * thread-safe: one caller at a time. Reconnecting is the caller's business.
 */
public final class Client implements AutoCloseable {
    /** The daemon answered ERROR: its reason, and its category when it sent one (an older daemon does not). */
    public static final class Refusal extends Exception {
        private static final long serialVersionUID = 1L;
        private final transient Optional<Category> category;

        public Refusal(String reason, Optional<Category> category) {
            super(reason, null, false, false);
            this.category = Objects.requireNonNull(category);
        }

        /** The ERROR's second argument; empty from a daemon that sends none (or a word of a newer one). */
        public Optional<Category> category() {
            return category;
        }
    }

    /** The server is not one a client of rsmapd may believe (see {@link TrustedServer}): nothing was sent. */
    public static final class Untrusted extends IOException {
        private static final long serialVersionUID = 1L;

        public Untrusted(String reason) {
            super(reason);
        }
    }

    /**
     * A command whose frame is over the client's frame bound ({@link #maxFrame}): never sent, since the
     * server would refuse it and close the connection; this connection stays usable. The command's fault,
     * never the server's: no use asking again.
     */
    public static final class Oversize extends IOException {
        private static final long serialVersionUID = 1L;

        public Oversize(String reason) {
            super(reason);
        }
    }

    /** What {@link #close} closes: the channel or the socket the streams belong to. */
    private final Closeable connection;
    private final InputStream in;
    private final OutputStream out;
    private final FrameDecoder decoder = new FrameDecoder(64 << 20);
    private final byte[] buffer = new byte[64 * 1024];
    private long tid;
    /** The largest frame {@link #send} sends: the protocol's bound unless told otherwise. */
    private int maxFrame = FrameDecoder.DEFAULT_MAX_FRAME;
    /** The bounded streams of a Unix connection with a timeout; null otherwise. */
    private BoundedChannel bounded;

    private Client(Closeable connection, InputStream in, OutputStream out) {
        this.connection = connection;
        this.in = in;
        this.out = out;
    }

    /** Connects to {@code socket}, checks that the server is rsmapd's ({@link TrustedServer#installed()}), sends INIT. */
    public static Client connect(Path socket) throws IOException, Refusal {
        return connect(socket, TrustedServer.installed());
    }

    /**
     * Connects to {@code socket}, checks that the server is rsmapd's, sends INIT; every later read and write
     * waits at most {@code timeout} (a {@link java.net.SocketTimeoutException} then: a stopped rsmapd costs
     * no more), until {@link #readTimeout} changes it.
     */
    public static Client connect(Path socket, Duration timeout) throws IOException, Refusal {
        return connect(socket, TrustedServer.installed(), Math.max(1, timeout.toMillis()));
    }

    /** Connects to {@code socket}, checks the server's uid against {@code trust}, sends INIT. */
    public static Client connect(Path socket, TrustedServer trust) throws IOException, Refusal {
        return connect(socket, trust, 0);
    }

    private static Client connect(Path socket, TrustedServer trust, long timeoutMillis) throws IOException, Refusal {
        SocketChannel ch = timeoutMillis > 0 ? BoundedChannel.connect(socket, timeoutMillis)
                : SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            if (timeoutMillis == 0) {
                ch.connect(UnixDomainSocketAddress.of(socket));
            }
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
        if (timeoutMillis == 0) {
            return init(new Client(ch, Channels.newInputStream(ch), Channels.newOutputStream(ch)), Session.VERSION);
        }
        BoundedChannel bounded;
        try {
            bounded = new BoundedChannel(ch, timeoutMillis);
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        Client c = new Client(bounded, bounded.in, bounded.out);
        c.bounded = bounded;
        return init(c, Session.VERSION);
    }

    /**
     * Connects over TCP to {@code address} and logs in: {@code INIT VERSION CREDENTIAL}, the credential
     * from {@code credential}, asked once per connect (a MUNGE credential is good for one use). The connect
     * and every read of an answer wait at most {@code timeout}: a server that does not answer in time is a
     * {@link java.net.SocketTimeoutException}, after which the connection is of no further use. A refused
     * login is a {@link Refusal} with the server's reason; the server has closed the connection then.
     * Nothing checks who the server is: a credential in its answer is for a later issue.
     */
    public static Client connect(InetSocketAddress address, Supplier<String> credential, Duration timeout)
            throws IOException, Refusal {
        int millis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true); // one small frame per command: no Nagle delay
            s.setKeepAlive(true); // a long-lived connection to an authority that vanished without a FIN
            s.connect(address, millis);
            s.setSoTimeout(millis);
        } catch (IOException e) {
            s.close();
            throw new IOException("cannot reach rsmapd at " + address + ": " + (e.getMessage() == null ? e
                    : e.getMessage()), e);
        }
        Client c = new Client(s, s.getInputStream(), s.getOutputStream());
        String proof;
        try {
            proof = Objects.requireNonNull(credential.get(), "the credential supplier gave null");
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return init(c, Session.VERSION, proof);
    }

    /** Sends INIT; the connection is closed when it fails. */
    private static Client init(Client c, String... args) throws IOException, Refusal {
        try {
            c.call(Code.INIT, args);
            return c;
        } catch (IOException | Refusal | RuntimeException e) {
            c.close();
            throw e;
        }
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
        receive(send(code, args), sink);
    }

    /**
     * Sends a command without waiting for its answer (read it with {@link #receive}): the caller does other
     * work meanwhile, as a host daemon forces its journal while the authority decides. Nothing
     * else may be sent on this connection before the answer is read.
     */
    public long send(Code code, String... args) throws IOException {
        Frame frame = Frame.of(tid + 1, code.value(), args);
        int length = frame.bodyLength();
        if (length > maxFrame) {
            throw new Oversize("the argument of " + code + " (" + length + " bytes framed) is over the "
                    + "protocol's " + bound(maxFrame) + " frame bound: not sent");
        }
        long t = ++tid;
        out.write(frame.encode()); // one write: one segment over TCP
        out.flush();
        return t;
    }

    /** The events of command {@code t} (from {@link #send}) up to its OK; ERROR becomes a {@link Refusal}. */
    public List<Frame> receive(long t) throws IOException, Refusal {
        List<Frame> events = new ArrayList<>();
        receive(t, events::add);
        return events;
    }

    private void receive(long t, Consumer<Frame> sink) throws IOException, Refusal {
        while (true) {
            Frame f = next();
            if (f.tid() != t) {
                continue; // a finished transaction's late event: dropped (the PTP proxy protocol)
            }
            if (f.code() == Code.OK.value()) {
                return;
            }
            if (f.code() == Code.ERROR.value()) {
                throw new Refusal(f.args().isEmpty() ? "(no reason given)" : f.text(0), Category.of(f));
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
            int n = in.read(buffer);
            if (n < 0) {
                throw new IOException("rsmapd closed the connection");
            }
            decoder.feed(buffer, 0, n);
        }
    }

    /**
     * The largest frame {@link #send} sends from now on ({@code max_frame} of the server's configuration,
     * where it is known; the protocol's 1 MiB otherwise): a larger one is an {@link Oversize}, not sent.
     */
    public Client maxFrame(int bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("a frame bound of " + bytes + " bytes");
        }
        maxFrame = bytes;
        return this;
    }

    private static String bound(int bytes) {
        return bytes % (1 << 20) == 0 ? (bytes >> 20) + " MiB" : bytes + " bytes";
    }

    /**
     * How long each later read and write may wait, 0 for no bound (an event stream waits for events); only
     * for a connection opened with a timeout ({@link #connect(Path, Duration)}).
     */
    public void readTimeout(Duration timeout) {
        if (bounded != null) {
            bounded.timeout(timeout.toMillis());
        }
    }

    @Override
    public void close() throws IOException {
        connection.close();
    }
}
