// The comparison operators of a node filter.
package rsmap.node;

/** {@code == != < <= > >=} and {@code in [...]}. */
public enum Op {
    EQ("=="), NE("!="), LT("<"), LE("<="), GT(">"), GE(">="), IN("in");

    private final String symbol;

    Op(String symbol) {
        this.symbol = symbol;
    }

    /** Whether the operator orders values, and so needs numbers or versions. */
    public boolean isOrdering() {
        return this == LT || this == LE || this == GT || this == GE;
    }

    /** Whether a comparison {@code c} (negative, zero, positive) satisfies this operator. */
    boolean holds(int c) {
        switch (this) {
            case EQ:
            case IN:
                return c == 0;
            case NE:
                return c != 0;
            case LT:
                return c < 0;
            case LE:
                return c <= 0;
            case GT:
                return c > 0;
            case GE:
                return c >= 0;
            default:
                throw new AssertionError(this);
        }
    }

    @Override
    public String toString() {
        return symbol;
    }
}
