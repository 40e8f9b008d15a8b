// A value written in a filter: a "string", a bare number or version (2GHz, 6.5.2), true or false.
package rsmap.node;

import java.util.Optional;
import rsmap.ParseException;

/**
 * A bare numeric literal is read both ways where it can be: {@code 6.5} is the number 6.5 and the
 * version 6.5, and which one counts depends on the attribute it meets ({@code kernel >= 6.5} against a
 * version, {@code load < 6.5} against a number); {@code 6.5.2} is a version only, {@code 2GHz} a number
 * only. Equal when written alike; {@link #toString()} is the canonical form (strings quoted).
 */
public final class Literal {
    /** What the literal was written as. */
    public enum Kind { STRING, NUMERIC, BOOLEAN }

    private final Kind kind;
    private final String written;
    /** Exactly one group is set: {@code string}; {@code number} and/or {@code version}; {@code flag}. */
    final String string;
    final Quantity number;
    final Version version;
    final AttributeValue.Flag flag;

    private Literal(Kind kind, String written, String string, Quantity number, Version version,
            AttributeValue.Flag flag) {
        this.kind = kind;
        this.written = written;
        this.string = string;
        this.number = number;
        this.version = version;
        this.flag = flag;
    }

    public static Literal string(String s) {
        return new Literal(Kind.STRING, quote(s), s, null, null, null);
    }

    public static Literal bool(boolean b) {
        return new Literal(Kind.BOOLEAN, Boolean.toString(b), null, null, null,
                b ? AttributeValue.Flag.TRUE : AttributeValue.Flag.FALSE);
    }

    /** A bare number or version; a refusal's offsets are relative to {@code text}. */
    public static Literal numeric(String text) throws ParseException {
        Optional<Quantity> number = Quantity.tryParse(text);
        Version version = null;
        ParseException notVersion = null;
        try {
            version = Version.parse(text);
        } catch (ParseException e) {
            notVersion = e;
        }
        if (number.isEmpty() && version == null) {
            if (text.indexOf('.') != text.lastIndexOf('.')) {
                throw notVersion; // two dots: meant as a version
            }
            Quantity.parse(text); // throws the number's own refusal
        }
        return new Literal(Kind.NUMERIC, text, null, number.orElse(null), version, null);
    }

    public Kind kind() {
        return kind;
    }

    /** This literal as a value of {@code type}, if it can be one (the check against declared types). */
    public Optional<AttributeValue> as(AttributeType type) {
        switch (type) {
            case STRING:
                return string == null ? Optional.empty() : Optional.of(new AttributeValue.Text(string));
            case NUMBER:
                return Optional.ofNullable(number);
            case VERSION:
                return Optional.ofNullable(version);
            case BOOLEAN:
                return Optional.ofNullable(flag);
            default:
                throw new AssertionError(type);
        }
    }

    /** What the literal is, for messages: "a string", "a number", "a version", "a number or version", "a boolean". */
    String describe() {
        switch (kind) {
            case STRING:
                return "a string";
            case BOOLEAN:
                return "a boolean";
            default:
                return number != null && version != null ? "a number or version" : number != null ? "a number"
                        : "a version";
        }
    }

    /**
     * Compares an attribute's value with this literal: negative, zero, positive, or
     * {@link Integer#MIN_VALUE} when they cannot be compared (missing value, other type, other unit).
     * Strings and booleans are unordered: 0 when equal, 1 otherwise.
     */
    int compareWith(AttributeValue v) {
        if (v instanceof Quantity) {
            return number == null ? Integer.MIN_VALUE : ((Quantity) v).compare(number);
        }
        if (v instanceof Version) {
            return version == null ? Integer.MIN_VALUE : ((Version) v).compare(version);
        }
        if (v instanceof AttributeValue.Text) {
            return string == null ? Integer.MIN_VALUE : ((AttributeValue.Text) v).text().equals(string) ? 0 : 1;
        }
        if (v instanceof AttributeValue.Flag) {
            return flag == null ? Integer.MIN_VALUE : flag.equals(v) ? 0 : 1;
        }
        return Integer.MIN_VALUE; // not set
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Literal && ((Literal) o).written.equals(written);
    }

    @Override
    public int hashCode() {
        return written.hashCode();
    }

    @Override
    public String toString() {
        return written;
    }

    /** Double quotes around, {@code \"} and {@code \\} inside: the only escapes the parser reads. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\');
            }
            b.append(c);
        }
        return b.append('"').toString();
    }
}
