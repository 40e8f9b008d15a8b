// What the language counts as whitespace, in one place for every parser.
package rsmap;

/** Character classes shared by the parsers. */
public final class Chars {
    private Chars() {
    }

    /**
     * Whitespace: Java's whitespace plus the no-break spaces (U+00A0, U+2007, U+202F), which look like
     * a blank and must never hide inside an identifier or a value.
     */
    public static boolean isSpace(char c) {
        return Character.isWhitespace(c) || Character.isSpaceChar(c);
    }

    /**
     * Keywords (types, YES/NO, INFINITY, TRUE/FALSE, NONE) compare without regard to ASCII case only:
     * {@code "ınt"} with a dotless i is not INT.
     */
    public static boolean keyword(String text, String keyword) {
        if (text.length() != keyword.length()) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            char a = text.charAt(i);
            char b = keyword.charAt(i);
            if (a != b && asciiUpper(a) != asciiUpper(b)) {
                return false;
            }
        }
        return true;
    }

    private static char asciiUpper(char c) {
        return c >= 'a' && c <= 'z' ? (char) (c - 32) : c;
    }

    /**
     * The case fold behind {@link String#equalsIgnoreCase}, one UTF-16 unit at a time, so that values
     * equal under it have equal hash codes ({@code "ſ"} and {@code "S"} among them).
     */
    public static String fold(String s) {
        char[] out = new char[s.length()];
        for (int i = 0; i < out.length; i++) {
            out[i] = Character.toLowerCase(Character.toUpperCase(s.charAt(i)));
        }
        return new String(out);
    }

    /** {@link #isSpace(char)} for a code point. */
    public static boolean isSpace(int codePoint) {
        return Character.isWhitespace(codePoint) || Character.isSpaceChar(codePoint);
    }
}
