// The one error type of every parser in rsmap: what was wrong, the input, where (offset, line,
// column) and the offending text. Parsers throw nothing else for bad input.
package rsmap;

import java.util.Objects;

/**
 * A refusal of input text. {@link #getMessage()} is one line: {@code line L, column C: problem}
 * (the line is left out for single-line input); {@link #caretLine()} renders the input line with a
 * caret under the offending position for humans.
 */
public final class ParseException extends Exception {
    private static final long serialVersionUID = 1L;
    private static final int SHOWN = 40;
    private static final int MAX_PROBLEM = 240;

    private final String problem;
    private final String input;
    private final int offset;
    private final String found;
    /** Whether the problem names its place by a document's path, not by the offset. */
    private final boolean atPath;

    /**
     * @param problem what is wrong, one short sentence without a trailing period
     * @param input   the whole input the offset refers to
     * @param offset  0-based index into {@code input} where the problem starts (clamped to the input)
     */
    public ParseException(String problem, String input, int offset) {
        this(problem, input, offset, false);
    }

    private ParseException(String problem, String input, int offset, boolean atPath) {
        super(null, null, false, false);
        this.problem = printable(Objects.requireNonNull(problem));
        this.input = input == null ? "" : input;
        this.offset = Math.max(0, Math.min(offset, this.input.length()));
        this.found = excerpt(this.input, this.offset);
        this.atPath = atPath;
    }

    /**
     * A problem that names where it is by a path in a document (a jobspec's or R's JSON path, RFC 51), which a
     * reader is shown instead of a column: {@link #atPath()} says so to whoever words the refusal.
     */
    public static ParseException atPath(String problem, String input, int offset) {
        return new ParseException(problem, input, offset, true);
    }

    /** Whether {@link #problem()} names its place by a document's path ({@link #atPath(String, String, int)}). */
    public boolean atPath() {
        return atPath;
    }

    /** What was wrong, without the location. */
    public String problem() {
        return problem;
    }

    public String input() {
        return input;
    }

    public int offset() {
        return offset;
    }

    /** The text at the offending position (at most 40 characters of it, up to the line end). */
    public String found() {
        return found;
    }

    /** 1-based line of the offset. */
    public int line() {
        int line = 1;
        for (int i = 0; i < offset; i++) {
            if (input.charAt(i) == '\n') {
                line++;
            }
        }
        return line;
    }

    /** 1-based column of the offset within its line, counted in characters (code points). */
    public int column() {
        int start = input.lastIndexOf('\n', offset - 1) + 1;
        return input.codePointCount(start, offset) + 1;
    }

    /** "line L, column C" for multi-line input, "column C" otherwise. */
    public String location() {
        return input.indexOf('\n') >= 0 ? "line " + line() + ", column " + column() : "column " + column();
    }

    /** "line L, column C" always, for input that is a file. */
    public String lineAndColumn() {
        return "line " + line() + ", column " + column();
    }

    @Override
    public String getMessage() {
        return location() + ": " + problem;
    }

    /** The offending line and a caret under the column, for a human reader. */
    public String caretLine() {
        int start = input.lastIndexOf('\n', offset - 1) + 1;
        int end = input.indexOf('\n', offset);
        String line = input.substring(start, end < 0 ? input.length() : end);
        return line + "\n" + " ".repeat(offset - start) + "^";
    }

    /**
     * The problem quotes input, which may hold line breaks, control characters or megabytes: keep the
     * message one readable line of bounded length.
     */
    private static String printable(String s) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), MAX_PROBLEM + 16));
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (b.length() >= MAX_PROBLEM) {
                b.append("...");
                break;
            }
            if (c == '\n') {
                b.append("\\n");
            } else if (c == '\r') {
                b.append("\\r");
            } else if (c == '\t') {
                b.append("\\t");
            } else if (Character.isISOControl(c) || Character.isSurrogate(c) && !validSurrogate(s, i)) {
                Hex.append(b.append("\\u"), c, 4);
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static boolean validSurrogate(String s, int i) {
        char c = s.charAt(i);
        return Character.isHighSurrogate(c) ? i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))
                : i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
    }

    private static String excerpt(String input, int offset) {
        int end = input.indexOf('\n', offset);
        end = Math.min(end < 0 ? input.length() : end, offset + SHOWN);
        return input.substring(offset, end);
    }
}
