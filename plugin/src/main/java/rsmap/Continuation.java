// Line continuations: a backslash before a line end joins the lines, and errors still point at the
// text as written.
package rsmap;

/**
 * The text with every {@code \}+LF (or {@code \}+CR+LF) removed, and for each index of the joined text
 * its index in the original (Grid Engine's RSMAP manual: "a long definition can be continued with \").
 */
public final class Continuation {
    private final String original;
    private final String joined;
    /** Null when nothing was joined: indexes are the same. */
    private final int[] origin;

    private Continuation(String original, String joined, int[] origin) {
        this.original = original;
        this.joined = joined;
        this.origin = origin;
    }

    public static Continuation of(String text) {
        if (text.indexOf('\\') < 0) {
            return new Continuation(text, text, null);
        }
        StringBuilder joined = new StringBuilder(text.length());
        int[] map = new int[text.length() + 1];
        int i = 0;
        while (i < text.length()) {
            int skip = length(text, i);
            if (skip > 0) {
                i += skip;
                continue;
            }
            map[joined.length()] = i;
            joined.append(text.charAt(i++));
        }
        map[joined.length()] = text.length();
        return joined.length() == text.length() ? new Continuation(text, text, null)
                : new Continuation(text, joined.toString(), map);
    }

    /** Length of a continuation (backslash, optional CR, LF) at {@code i}, or 0. */
    private static int length(String s, int i) {
        if (s.charAt(i) != '\\' || i + 1 >= s.length()) {
            return 0;
        }
        if (s.charAt(i + 1) == '\n') {
            return 2;
        }
        return s.charAt(i + 1) == '\r' && i + 2 < s.length() && s.charAt(i + 2) == '\n' ? 3 : 0;
    }

    public String original() {
        return original;
    }

    public String joined() {
        return joined;
    }

    /** An error at index {@code at} of the joined text, reported where the admin wrote it. */
    public ParseException error(String problem, int at) {
        int clamped = Math.max(0, Math.min(at, joined.length()));
        return new ParseException(problem, original, origin == null ? clamped : origin[clamped]);
    }

    /** A ParseException raised against the joined text, moved onto the original. */
    public ParseException relocate(ParseException e) {
        return error(e.problem(), e.offset());
    }
}
