// One line of the complex table: a named, typed attribute that hosts configure and jobs request.
package rsmap.complex;

import java.util.Objects;

/**
 * A complex definition, as one line of {@code qconf -sc}. Validated by {@link ComplexTable#parse};
 * the record itself only guards against nulls.
 *
 * @param defaultValue the default column as written (NONE, 0, FALSE, ...)
 * @param urgency      the urgency column as written
 */
public record Complex(String name, String shortcut, ValueType type, Relop relop, Requestable requestable,
                      Consumable consumable, String defaultValue, String urgency) {

    public Complex {
        Objects.requireNonNull(name);
        Objects.requireNonNull(shortcut);
        Objects.requireNonNull(type);
        Objects.requireNonNull(relop);
        Objects.requireNonNull(requestable);
        Objects.requireNonNull(consumable);
        Objects.requireNonNull(defaultValue);
        Objects.requireNonNull(urgency);
    }

    public boolean isResourceMap() {
        return type == ValueType.RSMAP;
    }

    /** The line in qconf -sc column order. */
    @Override
    public String toString() {
        return String.join(" ", name, shortcut, type.name(), relop.symbol(), requestable.name(),
                consumable.name(), defaultValue, urgency);
    }
}
