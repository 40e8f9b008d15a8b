// The complex table in the text format of qconf -sc, with the rules resource maps add to it.
package rsmap.complex;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import rsmap.Chars;
import rsmap.Chars;
import rsmap.Limits;
import rsmap.ParseException;

/**
 * The defined complexes, in file order, looked up by name or shortcut.
 *
 * <pre>
 * #name    shortcut  type   relop  requestable  consumable  default  urgency  [aapre affinity do_report is_static]
 * gpu      gpu       RSMAP  &lt;=     YES          HOST        0        0
 * </pre>
 *
 * Lines starting with {@code #} (and anything after a field that starts with {@code #}) are comments.
 * The four trailing columns of newer Open Cluster Scheduler releases are accepted and checked.
 */
public final class ComplexTable {
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.\\-]*");
    private static final Pattern WHOLE = Pattern.compile("[0-9]{1,9}");
    private static final Pattern NUMBER = Pattern.compile("[+-]?([0-9]{1,15}(\\.[0-9]{0,15})?|\\.[0-9]{1,15})");
    private static final String[] COLUMNS = {"name", "shortcut", "type", "relop", "requestable", "consumable",
        "default", "urgency", "aapre", "affinity", "do_report", "is_static"};
    private static final int REQUIRED = 8;

    private final List<Complex> complexes;
    private final Map<String, Complex> byKey;

    private ComplexTable(List<Complex> complexes) {
        this.complexes = List.copyOf(complexes);
        Map<String, Complex> keys = new HashMap<>();
        for (Complex c : complexes) {
            keys.put(c.shortcut(), c);
            keys.put(c.name(), c);
        }
        this.byKey = Collections.unmodifiableMap(keys);
    }

    /** A table of the given complexes, checked exactly as {@link #parse} checks a file. */
    public static ComplexTable of(List<Complex> complexes) throws ParseException {
        StringBuilder text = new StringBuilder();
        for (Complex c : complexes) {
            text.append(c).append('\n');
        }
        return parse(text.toString());
    }

    public static ComplexTable parse(String text) throws ParseException {
        return parse(text, Limits.DEFAULT);
    }

    /** Reads a complex table; every refusal names the line, the column and the rule broken. */
    public static ComplexTable parse(String text, Limits limits) throws ParseException {
        if (text.length() > limits.maxInputChars()) {
            throw new ParseException("complex table longer than " + limits.maxInputChars() + " characters",
                    text, limits.maxInputChars());
        }
        List<Complex> out = new ArrayList<>();
        Map<String, Complex> seen = new LinkedHashMap<>();
        int lineStart = 0;
        while (lineStart <= text.length()) {
            int lineEnd = text.indexOf('\n', lineStart);
            if (lineEnd < 0) {
                lineEnd = text.length();
            }
            List<int[]> fields = fields(text, lineStart, lineEnd, limits);
            if (!fields.isEmpty()) {
                Complex c = line(text, fields, lineEnd);
                for (String key : new String[] {c.name(), c.shortcut()}) {
                    Complex other = seen.get(key);
                    if (other != null && other != c) {
                        int at = key.equals(c.name()) ? fields.get(0)[0] : fields.get(1)[0];
                        throw new ParseException("'" + key + "' is already defined by complex '" + other.name()
                                + "'", text, at);
                    }
                    seen.put(key, c);
                }
                out.add(c);
            }
            lineStart = lineEnd + 1;
        }
        return new ComplexTable(out);
    }

    /** All complexes in file order. */
    public List<Complex> complexes() {
        return complexes;
    }

    /** The complex with this name or shortcut. */
    public Optional<Complex> find(String nameOrShortcut) {
        return Optional.ofNullable(byKey.get(nameOrShortcut));
    }

    /** The canonical table: one line per complex, columns separated by a space. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (Complex c : complexes) {
            b.append(c).append('\n');
        }
        return b.toString();
    }

    private static List<int[]> fields(String text, int from, int to, Limits limits) throws ParseException {
        List<int[]> fields = new ArrayList<>();
        int i = from;
        while (i < to) {
            char c = text.charAt(i);
            if (Chars.isSpace(c)) {
                i++;
                continue;
            }
            if (c == '#') {
                break;
            }
            int start = i;
            while (i < to && !Chars.isSpace(text.charAt(i))) {
                i++;
            }
            if (i - start > limits.maxTokenChars()) {
                throw new ParseException("field longer than " + limits.maxTokenChars() + " characters", text,
                        start);
            }
            fields.add(new int[] {start, i});
        }
        return fields;
    }

    private static Complex line(String text, List<int[]> f, int lineEnd) throws ParseException {
        if (f.size() < REQUIRED) {
            throw new ParseException("missing column '" + COLUMNS[f.size()] + "' (a complex has " + REQUIRED
                    + " columns: " + String.join(" ", java.util.Arrays.copyOf(COLUMNS, REQUIRED)) + ")", text,
                    lineEnd);
        }
        if (f.size() > COLUMNS.length) {
            throw new ParseException("unexpected column '" + field(text, f, COLUMNS.length) + "' (at most "
                    + COLUMNS.length + " columns)", text, f.get(COLUMNS.length)[0]);
        }
        String name = name(text, f, 0);
        String shortcut = name(text, f, 1);
        ValueType type = ValueType.byName(field(text, f, 2)).orElseThrow(() -> error(text, f, 2,
                "unknown type '" + field(text, f, 2) + "' (INT, DOUBLE, MEMORY, TIME, BOOL, STRING, CSTRING, "
                        + "RESTRING, HOST or RSMAP)"));
        Relop relop = Relop.bySymbol(field(text, f, 3)).orElseThrow(() -> error(text, f, 3,
                "unknown relop '" + field(text, f, 3) + "' (==, <, <=, >, >=, != or EXCL)"));
        Requestable requestable = Requestable.byName(field(text, f, 4)).orElseThrow(() -> error(text, f, 4,
                "requestable must be YES, NO or FORCED, not '" + field(text, f, 4) + "'"));
        Consumable consumable = Consumable.byName(field(text, f, 5)).orElseThrow(() -> error(text, f, 5,
                "consumable must be YES, NO, JOB or HOST, not '" + field(text, f, 5) + "'"));
        checkRelop(text, f, type, relop);
        checkConsumable(text, f, type, relop, consumable);
        String dflt = field(text, f, 6);
        checkDefault(text, f.get(6), type, dflt);
        checkNumber(text, f, 7, "urgency");
        for (int col = REQUIRED; col < f.size(); col++) {
            if (COLUMNS[col].equals("affinity")) {
                checkNumber(text, f, col, "affinity");
            } else if (!Chars.keyword(field(text, f, col), "YES") && !Chars.keyword(field(text, f, col), "NO")) {
                throw error(text, f, col, COLUMNS[col] + " must be YES or NO, not '" + field(text, f, col) + "'");
            }
        }
        return new Complex(name, shortcut, type, relop, requestable, consumable, dflt, field(text, f, 7));
    }

    /** Grid Engine's RSMAP manual, "DEFINING THE COMPLEX"; string and boolean rules of complex(5). */
    private static void checkRelop(String text, List<int[]> f, ValueType type, Relop relop) throws ParseException {
        if (type == ValueType.RSMAP && relop != Relop.LE) {
            throw error(text, f, 3, "a resource map must have relop <= (EXCL is for booleans), not "
                    + relop.symbol());
        }
        if (relop == Relop.EXCL && type != ValueType.BOOL) {
            throw error(text, f, 3, "relop EXCL is for BOOL complexes only, not " + type);
        }
        if ((type.isString() || type == ValueType.BOOL) && relop != Relop.EQ && relop != Relop.NE
                && relop != Relop.EXCL) {
            throw error(text, f, 3, "a " + type + " complex compares with == or !=, not " + relop.symbol());
        }
    }

    /** Grid Engine's RSMAP manual: a resource map is YES, JOB or HOST, never NO; a consumable must be <= or EXCL. */
    private static void checkConsumable(String text, List<int[]> f, ValueType type, Relop relop,
                                        Consumable consumable) throws ParseException {
        if (type == ValueType.RSMAP) {
            if (!consumable.isConsumable()) {
                throw error(text, f, 5, "a resource map is always consumable: YES, JOB or HOST, never NO");
            }
            return;
        }
        if (relop == Relop.EXCL && !consumable.isConsumable()) {
            throw error(text, f, 5, "an EXCL complex must be consumable");
        }
        if (!consumable.isConsumable()) {
            return;
        }
        if (type.isString()) {
            throw error(text, f, 5, "a " + type + " complex cannot be consumable");
        }
        if (relop != Relop.LE && relop != Relop.EXCL) {
            throw error(text, f, 3, "a consumable must have relop <= or EXCL, not " + relop.symbol());
        }
    }

    private static void checkDefault(String text, int[] at, ValueType type, String dflt) throws ParseException {
        if (Chars.keyword(dflt, "NONE") && (type.isString() || type == ValueType.RSMAP)) {
            return;
        }
        if (type == ValueType.RSMAP) {
            if (!WHOLE.matcher(dflt).matches()) {
                throw new ParseException("the default of a resource map is a whole number, not '" + dflt + "'",
                        text, at[0]);
            }
            return;
        }
        Value.parse(type, text, at[0], at[1]);
    }

    private static void checkNumber(String text, List<int[]> f, int col, String what) throws ParseException {
        String v = field(text, f, col);
        if (!NUMBER.matcher(v).matches()) {
            throw error(text, f, col, what + " must be a number, not '" + v + "'");
        }
    }

    private static String name(String text, List<int[]> f, int col) throws ParseException {
        String v = field(text, f, col);
        if (!NAME.matcher(v).matches()) {
            throw error(text, f, col, "invalid " + COLUMNS[col] + " '" + v
                    + "' (a letter or _, then letters, digits, _, . or -)");
        }
        return v;
    }

    private static String field(String text, List<int[]> f, int col) {
        return text.substring(f.get(col)[0], f.get(col)[1]);
    }

    private static ParseException error(String text, List<int[]> f, int col, String problem) {
        return new ParseException(problem, text, f.get(col)[0]);
    }
}
