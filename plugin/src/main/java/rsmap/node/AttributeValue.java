// One typed value of a host attribute: a string, a number with its unit, a version or a boolean.
package rsmap.node;

import java.util.Objects;
import rsmap.Chars;
import rsmap.ParseException;

/**
 * A value read with a declared type, or inferred (an undeclared attribute is a number when
 * its value parses as one, with an optional unit, else a string). {@link #toString()} is the value as
 * written.
 */
public sealed interface AttributeValue permits AttributeValue.Text, AttributeValue.Flag, Quantity, Version {

    AttributeType type();

    /** Reads {@code text} as a value of {@code type}; errors point into {@code text}. */
    static AttributeValue parse(AttributeType type, String text) throws ParseException {
        Objects.requireNonNull(type);
        switch (type) {
            case STRING:
                return new Text(text);
            case NUMBER:
                return Quantity.parse(text);
            case VERSION:
                return Version.parse(text);
            case BOOLEAN:
                return Flag.parse(text);
            default:
                throw new AssertionError(type);
        }
    }

    /** The value of an undeclared attribute: a number when {@code text} reads as one, else a string. */
    static AttributeValue infer(String text) {
        return Quantity.tryParse(text).map(q -> (AttributeValue) q).orElseGet(() -> new Text(text));
    }

    /** A string value, compared exactly (case matters: {@code x86_64} is not {@code X86_64}). */
    record Text(String text) implements AttributeValue {
        public Text {
            Objects.requireNonNull(text);
        }

        @Override
        public AttributeType type() {
            return AttributeType.STRING;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /** A boolean value: true or false, any ASCII case (1 and 0 too, as Grid Engine's BOOL). */
    record Flag(boolean value) implements AttributeValue {
        public static final Flag TRUE = new Flag(true);
        public static final Flag FALSE = new Flag(false);

        public static Flag parse(String text) throws ParseException {
            if (Chars.keyword(text, "true") || text.equals("1")) {
                return TRUE;
            }
            if (Chars.keyword(text, "false") || text.equals("0")) {
                return FALSE;
            }
            throw new ParseException("'" + text + "' is not a boolean (true, false, 1 or 0)", text, 0);
        }

        @Override
        public AttributeType type() {
            return AttributeType.BOOLEAN;
        }

        @Override
        public String toString() {
            return Boolean.toString(value);
        }
    }
}
