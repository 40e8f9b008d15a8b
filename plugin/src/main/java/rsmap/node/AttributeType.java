// The declared types of host attributes: what a value is read as and how two compare.
package rsmap.node;

import java.util.Locale;
import java.util.Optional;
import rsmap.Chars;

/**
 * STRING compares for equality only, exactly; NUMBER by value with units ({@link Quantity}); VERSION
 * component by component ({@link Version}); BOOLEAN for equality only.
 */
public enum AttributeType {
    STRING, NUMBER, VERSION, BOOLEAN;

    /** The type named {@code text} (string, number, version, boolean; any ASCII case). */
    public static Optional<AttributeType> byName(String text) {
        for (AttributeType t : values()) {
            if (Chars.keyword(text, t.name())) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }

    /** Whether {@code < <= > >=} mean anything for values of this type. */
    public boolean isOrdered() {
        return this == NUMBER || this == VERSION;
    }

    /** The name as written in a declaration: lower case. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
