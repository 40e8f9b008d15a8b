// A protocol client on a real Unix socket or TCP connection, for the tests of the server and the daemon.
package rsmap.wire;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

public final class TestClient implements AutoCloseable {
    private final SocketChannel ch;
    private final FrameDecoder decoder = new FrameDecoder(64 << 20); // answers (STATE) may be large

    public TestClient(Path socket) throws IOException {
        ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        ch.connect(UnixDomainSocketAddress.of(socket));
    }

    /** Over TCP, with TCP_NODELAY: every {@link #send} leaves as it was cut. */
    public TestClient(InetSocketAddress address) throws IOException {
        ch = SocketChannel.open();
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.connect(address);
    }

    /** Over TCP from the local address {@code from} (127.0.0.2: another source on the loopback). */
    public TestClient(InetSocketAddress address, java.net.InetAddress from) throws IOException {
        ch = SocketChannel.open();
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.bind(new InetSocketAddress(from, 0));
        ch.connect(address);
    }

    public void send(byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /** The events of one command: up to and including its OK or ERROR (fewer if the server closed). */
    public List<Frame> call(Frame command) throws IOException, FrameException {
        send(command.encode());
        return untilDone(command.tid());
    }

    /** Reads events until the OK or ERROR of {@code tid}; every event must carry that TID. */
    public List<Frame> untilDone(long tid) throws IOException, FrameException {
        List<Frame> got = new ArrayList<>();
        ByteBuffer in = ByteBuffer.allocate(4096);
        while (true) {
            for (Optional<Frame> f = decoder.next(); f.isPresent(); f = decoder.next()) {
                if (f.get().tid() != tid) {
                    throw new AssertionError("event of TID " + f.get().tid() + " while waiting for " + tid);
                }
                got.add(f.get());
                if (f.get().code() == Code.OK.value() || f.get().code() == Code.ERROR.value()) {
                    return got;
                }
            }
            in.clear();
            int n = ch.read(in);
            if (n < 0) {
                return got;
            }
            decoder.feed(in.array(), 0, n);
        }
    }

    /** The next event, whatever its TID; null when the server closed the connection. */
    public Frame next() throws IOException, FrameException {
        ByteBuffer in = ByteBuffer.allocate(4096);
        while (true) {
            Optional<Frame> f = decoder.next();
            if (f.isPresent()) {
                return f.get();
            }
            in.clear();
            int n = ch.read(in);
            if (n < 0) {
                return null;
            }
            decoder.feed(in.array(), 0, n);
        }
    }

    /** Whether nothing has arrived beyond the frames read so far (looked at without waiting; kept if something did). */
    public boolean nothingArrived() throws IOException {
        ch.configureBlocking(false);
        try {
            ByteBuffer in = ByteBuffer.allocate(4096);
            int n = ch.read(in);
            if (n > 0) {
                decoder.feed(in.array(), 0, n);
            }
            return n == 0 && decoder.buffered() == 0;
        } finally {
            ch.configureBlocking(true);
        }
    }

    public boolean closedByServer() throws IOException {
        return ch.read(ByteBuffer.allocate(1)) < 0;
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }

    /** The doc writes bytes as text with \xNN for the rest. */
    public static byte[] unescape(String s) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            if (s.startsWith("\\x", i)) {
                out.write(Integer.parseInt(s.substring(i + 2, i + 4), 16));
                i += 3;
            } else {
                out.writeBytes(String.valueOf(s.charAt(i)).getBytes(StandardCharsets.UTF_8));
            }
        }
        return out.toByteArray();
    }
}
