// The frames of one connection waiting to go out, in order, and the bytes they hold in the server's
// output total; guarded by its Connection's monitor (every caller holds it).
package rsmap.wire;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;

final class Outgoing {
    private final SocketServer server;
    private final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
    /** Bytes in {@code out}, counted in the server's output total. */
    private long queued;

    Outgoing(SocketServer server) {
        this.server = server;
    }

    boolean isEmpty() {
        return out.isEmpty();
    }

    long bytes() {
        return queued;
    }

    /** Queues {@code encoded} ({@code size} bytes in all) behind what was queued before. */
    void add(ByteBuffer[] encoded, long size) {
        for (ByteBuffer b : encoded) {
            out.add(b);
        }
        queued += size;
        server.addOutput(size);
    }

    /** Drops everything queued (the connection died) and gives its bytes back to the server's total. */
    void clear() {
        server.addOutput(-queued);
        queued = 0;
        out.clear();
    }

    /**
     * Writes what is queued through {@code direct} (the calling thread's buffer: heap buffers given to a
     * channel would each take a temporary direct buffer) until done or the socket is full; true when all is out.
     */
    boolean writeTo(SocketChannel channel, ByteBuffer direct) throws IOException {
        while (!out.isEmpty()) {
            direct.clear();
            for (ByteBuffer b : out) {
                if (!direct.hasRemaining()) {
                    break;
                }
                ByteBuffer d = b.duplicate();
                if (d.remaining() > direct.remaining()) {
                    d.limit(d.position() + direct.remaining());
                }
                direct.put(d);
            }
            direct.flip();
            int want = direct.remaining();
            int n = channel.write(direct);
            queued -= n;
            server.addOutput(-n);
            for (int left = n; left > 0;) {
                ByteBuffer head = out.peek();
                int take = Math.min(left, head.remaining());
                head.position(head.position() + take);
                left -= take;
                if (!head.hasRemaining()) {
                    out.poll();
                }
            }
            if (n < want) {
                return false;
            }
        }
        return true;
    }
}
