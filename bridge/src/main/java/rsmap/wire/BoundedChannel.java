// Streams over a Unix-socket channel whose every read and write waits at most a timeout: what a client of a
// stopped or stuck rsmapd needs, as SO_TIMEOUT gives a TCP socket (channels of Unix sockets have none).
package rsmap.wire;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * The channel in non-blocking mode with one selector: a read waits for data, a write for room, each at most
 * {@link #timeoutMillis} (0: no bound, for an event stream) and then fails with a
 * {@link SocketTimeoutException}, after which the connection is of no further use.
 */
final class BoundedChannel implements java.io.Closeable {
    private final SocketChannel channel;
    private final Selector selector;
    private volatile long timeoutMillis;

    BoundedChannel(SocketChannel channel, long timeoutMillis) throws IOException {
        this.channel = channel;
        this.timeoutMillis = timeoutMillis;
        channel.configureBlocking(false);
        this.selector = Selector.open();
    }

    /**
     * A connected channel to {@code socket}, or an IOException ("cannot reach rsmapd at ...") naming why; a
     * server that does not accept (its listen backlog full: the connect fails at once with EAGAIN, which the
     * JDK reports only by strerror's words) is tried again every 20 ms for at most {@code timeoutMillis}.
     */
    static SocketChannel connect(java.nio.file.Path socket, long timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        while (true) {
            SocketChannel ch = SocketChannel.open(java.net.StandardProtocolFamily.UNIX);
            try {
                ch.configureBlocking(false);
                ch.connect(java.net.UnixDomainSocketAddress.of(socket)); // a Unix socket connects at once or fails
                while (!ch.finishConnect()) {
                    Thread.onSpinWait();
                }
                ch.configureBlocking(true);
                return ch;
            } catch (java.net.SocketException e) {
                ch.close();
                if (!BACKLOG_FULL.equals(e.getMessage())) {
                    throw new IOException("cannot reach rsmapd at " + socket + ": " + e.getMessage(), e);
                }
                if (System.nanoTime() >= deadline) {
                    throw new IOException("cannot reach rsmapd at " + socket + ": it did not accept the connection in "
                            + "time", e);
                }
                sleep();
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
        }
    }

    /** strerror(EAGAIN) as glibc words it: what a Unix socket's connect says of a full listen backlog. */
    private static final String BACKLOG_FULL = "Resource temporarily unavailable";

    private static void sleep() throws IOException {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while connecting");
        }
    }

    void timeout(long millis) {
        timeoutMillis = millis;
    }

    /** Waits until the channel is ready for {@code op}, at most the timeout. */
    private void await(int op) throws IOException {
        SelectionKey key = channel.register(selector, op);
        try {
            long limit = timeoutMillis;
            long deadline = System.nanoTime() + limit * 1_000_000;
            while (selector.select(limit == 0 ? 0 : Math.max(1, (deadline - System.nanoTime()) / 1_000_000)) == 0) {
                if (limit > 0 && System.nanoTime() >= deadline) {
                    throw new SocketTimeoutException("rsmapd did not answer within " + (limit + 999) / 1000 + " s");
                }
            }
            selector.selectedKeys().clear();
        } finally {
            key.interestOps(0);
        }
    }

    final InputStream in = new InputStream() {
        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            ByteBuffer buf = ByteBuffer.wrap(b, off, len);
            while (true) {
                int n = channel.read(buf);
                if (n != 0 || len == 0) {
                    return n;
                }
                await(SelectionKey.OP_READ);
            }
        }
    };

    final OutputStream out = new OutputStream() {
        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            ByteBuffer buf = ByteBuffer.wrap(b, off, len);
            while (buf.hasRemaining()) {
                if (channel.write(buf) == 0) {
                    await(SelectionKey.OP_WRITE);
                }
            }
        }
    };

    @Override
    public void close() throws IOException {
        try {
            selector.close();
        } finally {
            channel.close();
        }
    }
}
