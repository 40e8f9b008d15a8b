// The types of a complex (column "type" of qconf -sc) and what each one says about its values.
package rsmap.complex;

import java.util.Optional;
import rsmap.Chars;

/** The type of a complex; it decides how a value is read and how two values compare. */
public enum ValueType {
    INT, DOUBLE, MEMORY, TIME, BOOL, STRING, CSTRING, RESTRING, HOST, RSMAP;

    /** Numbers compare by value and allow every relop. */
    public boolean isNumeric() {
        return this == INT || this == DOUBLE || this == MEMORY || this == TIME;
    }

    /** String-like types compare for (in)equality only. */
    public boolean isString() {
        return this == STRING || this == CSTRING || this == RESTRING || this == HOST;
    }

    /** The type named by {@code text}, ignoring case. */
    public static Optional<ValueType> byName(String text) {
        for (ValueType t : values()) {
            if (Chars.keyword(text, t.name())) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }
}
