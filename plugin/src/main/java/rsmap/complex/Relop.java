// The relation operator of a complex: how a requested value compares with a configured one.
package rsmap.complex;

import java.util.Optional;
import rsmap.Chars;

/**
 * A relation operator. As in an ordinary resource request the requested value stands on the left
 * and the configured value on the right (Grid Engine's RSMAP manual, "Matching against the characteristics of an
 * instance"): {@code memory <=} reads "requested <= configured", i.e. at least the requested amount.
 */
public enum Relop {
    EQ("=="), LT("<"), LE("<="), GT(">"), GE(">="), NE("!="), EXCL("EXCL");

    private final String symbol;

    Relop(String symbol) {
        this.symbol = symbol;
    }

    public String symbol() {
        return symbol;
    }

    /** Whether {@code requested OP configured} holds, given {@code cmp = compare(requested, configured)}. */
    public boolean holds(int cmp) {
        switch (this) {
            case EQ:
            case EXCL:
                return cmp == 0;
            case NE:
                return cmp != 0;
            case LT:
                return cmp < 0;
            case LE:
                return cmp <= 0;
            case GT:
                return cmp > 0;
            case GE:
                return cmp >= 0;
            default:
                throw new AssertionError(this);
        }
    }

    /** The operator written as {@code text} (EXCL in any case). */
    public static Optional<Relop> bySymbol(String text) {
        for (Relop r : values()) {
            if (Chars.keyword(text, r.symbol)) {
                return Optional.of(r);
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return symbol;
    }
}
