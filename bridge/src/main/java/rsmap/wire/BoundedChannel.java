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
