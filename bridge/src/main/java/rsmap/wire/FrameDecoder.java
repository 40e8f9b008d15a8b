// Reads frames from a byte stream that arrives in arbitrary pieces; asks for more bytes, never blocks.
package rsmap.wire;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Incremental decoder in the manner of Netty's LengthFieldBasedFrameDecoder: {@link #feed} appends
 * bytes, {@link #next} returns a frame once one is complete, empty when more bytes are needed. A
 * maximum frame length is mandatory and checked before anything is buffered for the frame.
 *
 * <p>Memory follows the bytes that arrived, never a declared LENGTH: the buffer starts empty, grows with
 * what is fed (at most to one maximum frame plus the piece that overflowed it) and is given back once
 * every frame in it was taken, so that an idle connection holds no buffer (issue 11, hole 8).
 */
public final class FrameDecoder {
    /** The default maximum: 1 MiB (issue 5). */
    public static final int DEFAULT_MAX_FRAME = 1 << 20;

    /** Buffers at most this large are kept between frames; larger ones are dropped when empty. */
    private static final int KEPT = 4096;
    private static final byte[] NONE = new byte[0];

    private final int maxFrame;
    private byte[] buf = NONE;
    private int start;
    private int end;
    private boolean broken;

    public FrameDecoder(int maxFrame) {
        if (maxFrame < Frame.HEADER) {
            throw new IllegalArgumentException("max frame below the header size");
        }
        this.maxFrame = maxFrame;
    }

    /** Appends bytes read from the stream. */
    public void feed(byte[] bytes, int off, int len) {
        room(len);
        System.arraycopy(bytes, off, buf, end, len);
        end += len;
    }

    /** Appends the remaining bytes of {@code bytes} (a channel's read buffer), consuming them. */
    public void feed(java.nio.ByteBuffer bytes) {
        int len = bytes.remaining();
        room(len);
        bytes.get(buf, end, len);
        end += len;
    }

    /** Makes room for {@code len} more bytes: doubling, but never beyond one maximum frame unless needed. */
    private void room(int len) {
        if (end + len <= buf.length) {
            return;
        }
        int live = end - start;
        int need = live + len;
        byte[] next = buf;
        if (need > buf.length) {
            int cap = Math.min(Math.max(256, buf.length * 2), Frame.LENGTH_DIGITS + maxFrame);
            next = new byte[Math.max(need, cap)];
        }
        System.arraycopy(buf, start, next, 0, live);
        buf = next;
        start = 0;
        end = live;
    }

    /** Bytes this decoder holds in memory (its buffer), fed or not: what a server accounts for it. */
    public int capacity() {
        return buf.length;
    }

    /** Bytes fed but not yet consumed by a frame. */
    public int buffered() {
        return end - start;
    }

    /**
     * The next complete frame, or empty when more bytes are needed. A bad frame is thrown as a
     * FrameException; unless it is fatal the decoder has skipped it and can go on.
     */
    public Optional<Frame> next() throws FrameException {
        if (broken) {
            throw new FrameException("the stream was broken by an earlier frame", true, 0);
        }
        if (end - start < Frame.LENGTH_DIGITS) {
            return Optional.empty();
        }
        long length = hex(start, Frame.LENGTH_DIGITS);
        if (length < 0) {
            broken = true;
            throw new FrameException("LENGTH is not 8 hex digits: '" + ascii(start, Frame.LENGTH_DIGITS) + "'", true, 0);
        }
        if (length > maxFrame) {
            broken = true;
            throw new FrameException("frame of " + length + " bytes is larger than the maximum " + maxFrame, true, 0);
        }
        if (length < Frame.HEADER) {
            broken = true;
            throw new FrameException("frame of " + length + " bytes is shorter than its TID and CODE", true, 0);
        }
        if (end - start < Frame.LENGTH_DIGITS + length) {
            return Optional.empty();
        }
        int body = start + Frame.LENGTH_DIGITS;
        int stop = (int) (body + length);
        start = stop; // the frame is delimited: whatever is wrong inside it, the next one starts here
        try {
            long tid = hex(body, 8);
            if (tid < 0) {
                throw new FrameException("TID is not 8 hex digits: '" + ascii(body, 8) + "'", false, 0);
            }
            long code = hex(body + 8, 4);
            if (code < 0) {
                throw new FrameException("CODE is not 4 hex digits: '" + ascii(body + 8, 4) + "'", false, tid);
            }
            return Optional.of(new Frame(tid, (int) code, args(body + Frame.HEADER, stop, tid)));
        } finally {
            if (start == end) { // every byte taken: start over, and give a large buffer back
                start = 0;
                end = 0;
                if (buf.length > KEPT) {
                    buf = NONE;
                }
            }
        }
    }

    private List<byte[]> args(int p, int stop, long tid) throws FrameException {
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
            long len = hex(p, colon - p);
            if (len < 0) {
                throw new FrameException("argument " + (args.size() + 1) + " has a bad length '" + ascii(p, colon - p) + "'",
                        false, tid);
            }
            p = colon + 1;
            if (len > stop - p) {
                throw new FrameException("argument " + (args.size() + 1) + " is longer than its frame", false, tid);
            }
            ByteArrayOutputStream a = new ByteArrayOutputStream((int) len);
            a.write(buf, p, (int) len);
            args.add(a.toByteArray());
            p += (int) len;
        }
        return args;
    }

    /** The value of {@code digits} hex digits at {@code at}, or -1 if any is not a hex digit. */
    private long hex(int at, int digits) {
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

    private String ascii(int at, int len) {
        StringBuilder b = new StringBuilder();
        for (int i = at; i < at + len && i < end; i++) {
            int c = buf[i] & 0xff;
            b.append(c >= 0x20 && c < 0x7f ? String.valueOf((char) c) : String.format("\\x%02x", c));
        }
        return b.toString();
    }
}
