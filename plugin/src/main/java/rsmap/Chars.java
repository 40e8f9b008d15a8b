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

    /** {@link #isSpace(char)} for a code point. */
    public static boolean isSpace(int codePoint) {
        return Character.isWhitespace(codePoint) || Character.isSpaceChar(codePoint);
    }
}
