// Reads frames from a byte stream that arrives in arbitrary pieces; asks for more bytes, never blocks.
package rsmap.wire;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import rsmap.Hex;

/**
 * Incremental decoder in the manner of Netty's LengthFieldBasedFrameDecoder: {@link #feed} appends
 * bytes, {@link #next} returns a frame once one is complete, empty when more bytes are needed. A
 * maximum frame length is mandatory and checked before anything is buffered for the frame.
 *
 * <pre>
 * +----------+----------+------+----------------------------------+
 * | LENGTH   | TID      | CODE | ARGS: (" " HEXLEN ":" BYTES)*    |
 * | 8 hex    | 8 hex    | 4 hex|                                  |
 * +----------+----------+------+----------------------------------+
 *            |&lt;----------------- LENGTH bytes --------------------&gt;|
 * </pre>
 *
 * <p>Memory follows the bytes that arrived, never a declared LENGTH: they are held in
 * fixed-size {@link Chunks}, taken as bytes come and given back as frames are taken, so that a decoder
 * with nothing pending holds nothing and a partial frame never costs a copy to grow. A server gives
 * all its decoders one pool.
 */
public final class FrameDecoder {
    /** The default maximum: 1 MiB. */
    public static final int DEFAULT_MAX_FRAME = 1 << 20;

    private final int maxFrame;
    private final Chunks chunks;
    /** The bytes fed and not yet taken: from {@code head} in the first chunk to {@code tail} in the last. */
    private final ArrayDeque<byte[]> held = new ArrayDeque<>();
    private int head;
    private int tail;
    private int buffered;
    private final byte[] length = new byte[Frame.LENGTH_DIGITS];
    private boolean broken;

    public FrameDecoder(int maxFrame) {
        this(maxFrame, new Chunks(1)); // one chunk kept between frames: no garbage per small frame
    }

    FrameDecoder(int maxFrame, Chunks chunks) {
        if (maxFrame < Frame.HEADER) {
            throw new IllegalArgumentException("max frame below the header size");
        }
        this.maxFrame = maxFrame;
        this.chunks = chunks;
    }

    /** Appends bytes read from the stream. */
    public void feed(byte[] bytes, int off, int len) {
        while (len > 0) {
            int n = Math.min(len, room());
            System.arraycopy(bytes, off, held.peekLast(), tail, n);
            tail += n;
            buffered += n;
            off += n;
            len -= n;
        }
    }

    /** Appends the remaining bytes of {@code bytes} (a channel's read buffer), consuming them. */
    public void feed(java.nio.ByteBuffer bytes) {
        while (bytes.hasRemaining()) {
            int n = Math.min(bytes.remaining(), room());
            bytes.get(held.peekLast(), tail, n);
            tail += n;
            buffered += n;
        }
    }

    /** Room in the last chunk, taking a new one when it is full. */
    private int room() {
        if (held.isEmpty() || tail == Chunks.SIZE) {
            held.addLast(chunks.take());
            tail = 0;
        }
        return Chunks.SIZE - tail;
    }

    /** Bytes this decoder holds in memory (its chunks): what a server accounts for it. */
    public int capacity() {
        return held.size() * Chunks.SIZE;
    }

    /** Copies the next {@code len} bytes into {@code to} at {@code at}; consumes them if {@code take}. */
    private void copy(byte[] to, int at, int len, boolean take) {
        if (take) {
            while (len > 0) {
                int end = held.size() == 1 ? tail : Chunks.SIZE;
                int n = Math.min(len, end - head);
                System.arraycopy(held.peekFirst(), head, to, at, n);
                at += n;
                len -= n;
                head += n;
                buffered -= n;
                if (head == end) { // a chunk used up (or the last one emptied): back to the pool
                    chunks.give(held.pollFirst());
                    head = 0;
                    if (held.isEmpty()) {
                        tail = 0;
                    }
                }
            }
            return;
        }
        int from = head;
        int i = 0;
        for (byte[] c : held) {
            if (len == 0) {
                return;
            }
            int end = ++i == held.size() ? tail : Chunks.SIZE;
            int n = Math.min(len, end - from);
            System.arraycopy(c, from, to, at, n);
            at += n;
            len -= n;
            from = 0;
        }
    }

    /** Gives back the chunks of bytes that are no longer needed (the decoder is done with the stream). */
    public void release() {
        for (byte[] c = held.pollFirst(); c != null; c = held.pollFirst()) {
            chunks.give(c);
        }
        head = 0;
        tail = 0;
        buffered = 0;
    }

    /** Bytes fed but not yet consumed by a frame. */
    public int buffered() {
        return buffered;
    }

    /**
     * The next complete frame, or empty when more bytes are needed. A bad frame is thrown as a
     * FrameException; unless it is fatal the decoder has skipped it and can go on.
     */
    public Optional<Frame> next() throws FrameException {
        if (broken) {
            throw new FrameException("the stream was broken by an earlier frame", true, 0);
        }
        if (buffered < Frame.LENGTH_DIGITS) {
            return Optional.empty();
        }
        copy(length, 0, Frame.LENGTH_DIGITS, false);
        long len = hex(length, 0, Frame.LENGTH_DIGITS);
        if (len < 0) {
            broken = true;
            throw new FrameException("LENGTH is not 8 hex digits: '" + ascii(length, 0, Frame.LENGTH_DIGITS) + "'", true,
                    0);
        }
        if (len > maxFrame) {
            broken = true;
            throw new FrameException("frame of " + len + " bytes is larger than the maximum " + maxFrame, true, 0);
        }
        if (len < Frame.HEADER) {
            broken = true;
            throw new FrameException("frame of " + len + " bytes is shorter than its TID and CODE", true, 0);
        }
        if (buffered < Frame.LENGTH_DIGITS + len) {
            return Optional.empty();
        }
        // The frame is delimited: whatever is wrong inside it, the next one starts after it.
        copy(length, 0, Frame.LENGTH_DIGITS, true);
        byte[] b = new byte[(int) len];
        copy(b, 0, b.length, true);
        long tid = hex(b, 0, 8);
        if (tid < 0) {
            throw new FrameException("TID is not 8 hex digits: '" + ascii(b, 0, 8) + "'", false, 0);
        }
        long code = hex(b, 8, 4);
        if (code < 0) {
            throw new FrameException("CODE is not 4 hex digits: '" + ascii(b, 8, 4) + "'", false, tid);
        }
        return Optional.of(new Frame(tid, (int) code, args(b, Frame.HEADER, b.length, tid)));
    }

    private static List<byte[]> args(byte[] buf, int p, int stop, long tid) throws FrameException {
        List<byte[]> args = new ArrayList<>();
        while (p < stop) {
            if (buf[p] != ' ') {
                throw new FrameException("argument " + (args.size() + 1) + " does not start with a space", false, tid);
            }
            p++;
            int colon = p;
            while (colon < stop && colon - p <= 8 && buf[colon] != ':') {
                colon++;
            }
            if (colon >= stop || buf[colon] != ':' || colon == p) {
                throw new FrameException("argument " + (args.size() + 1) + " has no HEXLEN: prefix", false, tid);
            }
            long len = hex(buf, p, colon - p);
            if (len < 0) {
                throw new FrameException("argument " + (args.size() + 1) + " has a bad length '" + ascii(buf, p, colon - p) + "'",
                        false, tid);
            }
            p = colon + 1;
            if (len > stop - p) {
                throw new FrameException("argument " + (args.size() + 1) + " is longer than its frame", false, tid);
            }
            args.add(java.util.Arrays.copyOfRange(buf, p, p + (int) len));
            p += (int) len;
        }
        return args;
    }

    /** The value of {@code digits} hex digits at {@code at}, or -1 if any is not a hex digit. */
    private static long hex(byte[] buf, int at, int digits) {
        long v = 0;
        for (int i = 0; i < digits; i++) {
            int d = Character.digit(buf[at + i] & 0xff, 16);
            if (d < 0 || (buf[at + i] & 0xff) > 'f') {
                return -1;
            }
            v = v << 4 | d;
        }
        return v;
    }

    private static String ascii(byte[] buf, int at, int len) {
        StringBuilder b = new StringBuilder();
        for (int i = at; i < at + len && i < buf.length; i++) {
            int c = buf[i] & 0xff;
            if (c >= 0x20 && c < 0x7f) {
                b.append((char) c);
            } else {
                Hex.append(b.append("\\x"), c, 2);
            }
        }
        return b.toString();
    }
}
