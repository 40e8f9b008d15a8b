// A value read with the type of its complex: a number, a boolean or a string, kept with its text.
package rsmap.complex;

import java.util.Objects;
import rsmap.Chars;
import rsmap.ParseException;

/**
 * A typed value. Numbers (INT, DOUBLE, MEMORY in bytes, TIME in seconds) are held as a double, as
 * Grid Engine does; BOOL as 1 or 0. The text is kept as written so the canonical form shows what the
 * admin wrote. Two values are equal when their type says they are the same: numbers and booleans by
 * value ({@code 80G} equals {@code 81920M}), CSTRING and HOST without regard to case, STRING and
 * RESTRING exactly.
 */
public final class Value {
    /** MEMORY suffixes (Grid Engine's RSMAP manual via the issue: k/m/g/t powers of 1000, K/M/G/T powers of 1024). */
    private static final String SUFFIXES = "kKmMgGtT";

    private final ValueType type;
    private final String text;
    private final double number;

    private Value(ValueType type, String text, double number) {
        this.type = type;
        this.text = text;
        this.number = number;
    }

    /** Reads {@code text} as a value of {@code type}; offsets in errors are relative to {@code text}. */
    public static Value parse(ValueType type, String text) throws ParseException {
        return parse(type, text, 0, text.length());
    }

    /**
     * Reads {@code input[start, end)} as a value of {@code type}; errors point into {@code input}.
     */
    public static Value parse(ValueType type, String input, int start, int end) throws ParseException {
        Objects.requireNonNull(type);
        String text = input.substring(start, end);
        if (text.isEmpty()) {
            throw new ParseException("empty " + type + " value", input, start);
        }
        switch (type) {
            case INT:
                return new Value(type, text, integer(text, input, start));
            case DOUBLE:
                return new Value(type, text, decimal(text, input, start));
            case MEMORY:
                return new Value(type, text, memory(text, input, start));
            case TIME:
                return new Value(type, text, time(text, input, start));
            case BOOL:
                return new Value(type, text, bool(text, input, start));
            case HOST:
                return new Value(type, text, host(text, input, start));
            case STRING:
            case CSTRING:
            case RESTRING:
                return new Value(type, text, Double.NaN);
            case RSMAP:
                throw new ParseException("a resource map has no single value", input, start);
            default:
                throw new AssertionError(type);
        }
    }

    /**
     * A value of a string type taken as written, for the pattern of an ordinary request
     * ({@code -l hostname=node0*}), which is matched as an expression rather than read as a value.
     */
    public static Value pattern(ValueType type, String text) {
        if (!type.isString()) {
            throw new IllegalArgumentException(type + " is not a string type");
        }
        return new Value(type, text, Double.NaN);
    }

    public ValueType type() {
        return type;
    }

    /** The value as written. */
    public String text() {
        return text;
    }

    /** The numeric value: bytes, seconds, 1/0 for BOOL; NaN for string types. */
    public double number() {
        return number;
    }

    /**
     * Orders two values of the same type for a relop: numbers and booleans by value, strings by the
     * equality rule of their type (0 when equal, nonzero otherwise).
     */
    public int compareTo(Value other) {
        if (type.isNumeric() || type == ValueType.BOOL) {
            return Double.compare(number, other.number);
        }
        return sameText(other) ? 0 : text.compareTo(other.text); // nonzero: equal texts are the same
    }

    private boolean sameText(Value other) {
        switch (type) {
            case CSTRING:
                return Chars.fold(text).equals(Chars.fold(other.text));
            case HOST:
                return hostsEqual(text, other.text);
            default:
                return text.equals(other.text);
        }
    }

    /**
     * Host name rules: case does not matter, and where one of the names carries no domain only the
     * first labels are compared ({@code node01} is {@code node01.example.org}).
     */
    public static boolean hostsEqual(String a, String b) {
        String fa = Chars.fold(a);
        String fb = Chars.fold(b);
        if (fa.equals(fb)) {
            return true;
        }
        int da = fa.indexOf('.');
        int db = fb.indexOf('.');
        if (da >= 0 && db >= 0) {
            return false;
        }
        return (da >= 0 ? fa.substring(0, da) : fa).equals(db >= 0 ? fb.substring(0, db) : fb);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Value)) {
            return false;
        }
        Value v = (Value) o;
        return type == v.type && compareTo(v) == 0;
    }

    @Override
    public int hashCode() {
        if (type.isNumeric() || type == ValueType.BOOL) {
            return Objects.hash(type, number);
        }
        if (type == ValueType.HOST) {
            int dot = text.indexOf('.');
            return Objects.hash(type, Chars.fold(dot >= 0 ? text.substring(0, dot) : text));
        }
        return Objects.hash(type, type == ValueType.CSTRING ? Chars.fold(text) : text);
    }

    @Override
    public String toString() {
        return text;
    }

    private static boolean infinity(String text) {
        return Chars.keyword(text, "INFINITY");
    }

    private static double integer(String text, String input, int start) throws ParseException {
        if (infinity(text)) {
            return Double.POSITIVE_INFINITY;
        }
        int i = text.charAt(0) == '-' || text.charAt(0) == '+' ? 1 : 0;
        if (i == text.length() || !allDigits(text, i, text.length())) {
            throw new ParseException("'" + text + "' is not an INT", input, start);
        }
        if (text.length() - i > 18) {
            throw new ParseException("INT '" + text + "' is out of range", input, start);
        }
        return Long.parseLong(text);
    }

    private static double decimal(String text, String input, int start) throws ParseException {
        if (infinity(text)) {
            return Double.POSITIVE_INFINITY;
        }
        if (text.length() > 64 || !isDecimal(text, true, true)) {
            throw new ParseException("'" + text + "' is not a DOUBLE", input, start);
        }
        double d = Double.parseDouble(text);
        if (Double.isInfinite(d)) {
            throw new ParseException("DOUBLE '" + text + "' is out of range", input, start);
        }
        return d;
    }

    private static double memory(String text, String input, int start) throws ParseException {
        if (infinity(text)) {
            return Double.POSITIVE_INFINITY;
        }
        char last = text.charAt(text.length() - 1);
        int suffix = SUFFIXES.indexOf(last);
        String digits = suffix >= 0 ? text.substring(0, text.length() - 1) : text;
        if (digits.length() > 30 || !isDecimal(digits, false, false)) {
            throw new ParseException("'" + text + "' is not a MEMORY value (a number with an optional "
                    + "k, m, g, t, K, M, G or T)", input, start);
        }
        double factor = 1;
        if (suffix >= 0) {
            double base = Character.isLowerCase(last) ? 1000 : 1024;
            factor = Math.pow(base, suffix / 2 + 1);
        }
        return Double.parseDouble(digits) * factor;
    }

    private static double time(String text, String input, int start) throws ParseException {
        if (infinity(text)) {
            return Double.POSITIVE_INFINITY;
        }
        String[] parts = text.split(":", -1);
        if (parts.length > 3) {
            throw new ParseException("'" + text + "' is not a TIME ([[hours:]minutes:]seconds)", input, start);
        }
        double seconds = 0;
        for (String p : parts) {
            if (p.isEmpty() || p.length() > 12 || !allDigits(p, 0, p.length())) {
                throw new ParseException("'" + text + "' is not a TIME ([[hours:]minutes:]seconds)", input,
                        start);
            }
            seconds = seconds * 60 + Long.parseLong(p);
        }
        return seconds;
    }

    private static double bool(String text, String input, int start) throws ParseException {
        if (Chars.keyword(text, "TRUE") || text.equals("1")) {
            return 1;
        }
        if (Chars.keyword(text, "FALSE") || text.equals("0")) {
            return 0;
        }
        throw new ParseException("'" + text + "' is not a BOOL (TRUE, FALSE, 1 or 0)", input, start);
    }

    private static double host(String text, String input, int start) throws ParseException {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (!(Character.isLetterOrDigit(c) && c < 128) && c != '-' && c != '.' && c != '_') {
                throw new ParseException("'" + text + "' is not a host name", input, start + i);
            }
        }
        return Double.NaN;
    }

    /** {@code [sign] digits [. digits] [e [sign] 1-3 digits]} with a digit somewhere in the mantissa; linear. */
    private static boolean isDecimal(String s, boolean sign, boolean exponent) {
        int i = 0;
        int n = s.length();
        if (sign && i < n && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
            i++;
        }
        int mantissa = 0;
        while (i < n && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
            i++;
            mantissa++;
        }
        if (i < n && s.charAt(i) == '.') {
            i++;
            while (i < n && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                i++;
                mantissa++;
            }
        }
        if (mantissa == 0) {
            return false;
        }
        if (exponent && i < n && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
            i++;
            if (i < n && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
                i++;
            }
            int digits = 0;
            while (i < n && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                i++;
                digits++;
            }
            if (digits == 0 || digits > 3) {
                return false;
            }
        }
        return i == n;
    }

    private static boolean allDigits(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }
}
