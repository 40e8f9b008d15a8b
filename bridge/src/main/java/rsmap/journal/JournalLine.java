// One journal line: CRC32 and length in hex, the record in UTF-8, a line feed; what Journal writes and
// what its replay accepts as whole.
package rsmap.journal;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * <pre>
 * CRC32(8 hex) SP LENGTH(8 hex) SP RECORD LF
 * </pre>
 * A line whose head, length or CRC does not hold is no record ({@link #decode} gives null): the journal's
 * replay cuts it as a torn tail, or refuses a damaged one with whole records behind it.
 */
final class JournalLine {
    private JournalLine() {
    }

    /** The line of {@code record}: its head, the record in UTF-8, a line feed. */
    static byte[] encode(String record) {
        if (record.indexOf('\n') >= 0) {
            throw new IllegalArgumentException("a journal record is one line");
        }
        byte[] body = record.getBytes(StandardCharsets.UTF_8);
        CRC32 crc = new CRC32();
        crc.update(body);
        byte[] line = new byte[HEAD + body.length + 1];
        putHex(line, 0, crc.getValue());
        line[8] = ' ';
        putHex(line, 9, body.length);
        line[17] = ' ';
        System.arraycopy(body, 0, line, HEAD, body.length);
        line[line.length - 1] = '\n';
        return line;
    }

    /** The head's length: CRC32, a space, the length, a space. */
    private static final int HEAD = 18;
    private static final byte[] DIGITS = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    /** {@code v} as 8 lower-case hex digits at {@code at} (what "%08x" wrote, without a formatter per record). */
    private static void putHex(byte[] into, int at, long v) {
        for (int i = 7; i >= 0; i--) {
            into[at + i] = DIGITS[(int) (v & 0xf)];
            v >>>= 4;
        }
    }

    /** The record of the line {@code all[from, lf)}, or null when it is not a whole, intact line. */
    static String decode(byte[] all, int from, int lf) {
        if (lf - from < HEAD || all[from + 8] != ' ' || all[from + 17] != ' ') {
            return null;
        }
        long crc = hex(all, from, 8);
        long len = hex(all, from + 9, 8);
        if (crc < 0 || len < 0 || len != lf - from - HEAD) {
            return null;
        }
        CRC32 check = new CRC32();
        check.update(all, from + HEAD, (int) len);
        if (check.getValue() != crc) {
            return null;
        }
        return new String(all, from + HEAD, (int) len, StandardCharsets.UTF_8);
    }

    private static long hex(byte[] b, int at, int digits) {
        long v = 0;
        for (int i = 0; i < digits; i++) {
            int d = Character.digit(b[at + i], 16);
            if (d < 0) {
                return -1;
            }
            v = v << 4 | d;
        }
        return v;
    }

}
