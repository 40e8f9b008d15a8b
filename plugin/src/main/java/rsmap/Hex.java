// Fixed-width hexadecimal for the escapes of error lines and logs (\x1b, \u2028, code 00ff, U+001B): a
// flood of garbage frames or bad requests formats one per character, and String.format's parser is a
// regular expression. Shared by the parsers here and the daemon's protocol.
package rsmap;

/** Appends without allocating beyond the builder; the same digits as {@code %0Nx}. */
public final class Hex {
    private static final char[] DIGITS = "0123456789abcdef".toCharArray();
    private static final char[] UPPER = "0123456789ABCDEF".toCharArray();

    private Hex() {
    }

    /** The low {@code digits} hexadecimal digits of {@code v}, zero-padded, appended to {@code b}. */
    public static StringBuilder append(StringBuilder b, long v, int digits) {
        for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) {
            b.append(DIGITS[(int) (v >>> shift) & 15]);
        }
        return b;
    }

    /** The same in upper case, as {@code %0NX}: the digits of a code point written U+001B. */
    public static StringBuilder appendUpper(StringBuilder b, long v, int digits) {
        for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) {
            b.append(UPPER[(int) (v >>> shift) & 15]);
        }
        return b;
    }

    /** {@code v} as {@code digits} hexadecimal digits. */
    public static String of(long v, int digits) {
        return append(new StringBuilder(digits), v, digits).toString();
    }
}
