// One message of the agent protocol: a transaction id, a code, and length-prefixed arguments.
package rsmap.wire;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import rsmap.Hex;

/**
 * A command or an event of the agent protocol (the PTP proxy protocol, "Wire protocol for a command"):
 *
 * <pre>
 * +----------+----------+------+-------------------------------------------+
 * | LENGTH   | TID      | CODE | ARGS                                      |
 * | 8 hex    | 8 hex    | 4 hex| (" " HEXLEN ":" BYTES)*                   |
 * +----------+----------+------+-------------------------------------------+
 *  0000001d   00000007   0001   " 1:1" " 6:{"a":1}" ...
 * </pre>
 *
 * LENGTH counts the bytes after the length field (TID, CODE and ARGS). Hex digits are lower case when
 * written and read in either case. Each argument carries its own length, so any bytes survive; the
 * argument separator is a single space. Structured payloads travel as one JSON argument.
 */
public record Frame(long tid, int code, List<byte[]> args) {
    /** Bytes of the header after LENGTH: TID (8) and CODE (4). */
    static final int HEADER = 12;
    public static final int LENGTH_DIGITS = 8;

    public Frame {
        if (tid < 0 || tid > 0xffffffffL) {
            throw new IllegalArgumentException("tid out of range: " + tid);
        }
        if (code < 0 || code > 0xffff) {
            throw new IllegalArgumentException("code out of range: " + code);
        }
        List<byte[]> copy = new ArrayList<>(args.size());
        for (byte[] a : args) {
            copy.add(Objects.requireNonNull(a).clone());
        }
        args = List.copyOf(copy);
    }

    /** A frame whose arguments are UTF-8 strings. */
    public static Frame of(long tid, int code, String... args) {
        List<byte[]> bytes = new ArrayList<>();
        for (String a : args) {
            bytes.add(a.getBytes(StandardCharsets.UTF_8));
        }
        return new Frame(tid, code, bytes);
    }

    /** Argument {@code i} as UTF-8 text (invalid bytes become U+FFFD). */
    public String text(int i) {
        return new String(args.get(i), StandardCharsets.UTF_8);
    }

    /** Argument {@code i} as UTF-8 text, or empty when its bytes are not valid UTF-8. */
    public java.util.Optional<String> strictText(int i) {
        try {
            return java.util.Optional.of(StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                    .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(args.get(i))).toString());
        } catch (java.nio.charset.CharacterCodingException e) {
            return java.util.Optional.empty();
        }
    }

    /** The frame's length after its LENGTH field: what a receiver holds against its frame bound. */
    public int bodyLength() {
        int body = HEADER;
        for (byte[] a : args) {
            body += 1 + Integer.toHexString(a.length).length() + 1 + a.length;
        }
        return body;
    }

    /** The frame as it travels, LENGTH included. */
    public byte[] encode() {
        int body = bodyLength();
        byte[] out = new byte[LENGTH_DIGITS + body];
        int p = hex(out, 0, body, 8);
        p = hex(out, p, tid, 8);
        p = hex(out, p, code, 4);
        for (byte[] a : args) {
            out[p++] = ' ';
            byte[] len = Integer.toHexString(a.length).getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(len, 0, out, p, len.length);
            p += len.length;
            out[p++] = ':';
            System.arraycopy(a, 0, out, p, a.length);
            p += a.length;
        }
        return out;
    }

    private static int hex(byte[] out, int at, long value, int digits) {
        for (int i = digits - 1; i >= 0; i--) {
            out[at + i] = (byte) Character.forDigit((int) (value & 0xf), 16);
            value >>>= 4;
        }
        return at + digits;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Frame)) {
            return false;
        }
        Frame f = (Frame) o;
        if (f.tid != tid || f.code != code || f.args.size() != args.size()) {
            return false;
        }
        for (int i = 0; i < args.size(); i++) {
            if (!Arrays.equals(args.get(i), f.args.get(i))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        int h = Long.hashCode(tid) * 31 + code;
        for (byte[] a : args) {
            h = h * 31 + Arrays.hashCode(a);
        }
        return h;
    }

    /** The frame as it travels, for logs and golden files (printable ASCII kept, other bytes as \xNN). */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (byte x : encode()) {
            int c = x & 0xff;
            if (c >= 0x20 && c < 0x7f && c != '\\') {
                b.append((char) c);
            } else {
                Hex.append(b.append("\\x"), c, 2);
            }
        }
        return b.toString();
    }
}
