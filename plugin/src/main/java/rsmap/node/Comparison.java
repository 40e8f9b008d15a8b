// One comparison of a node filter: an attribute, an operator and a literal (or a list, for in).
package rsmap.node;

import java.util.List;
import java.util.Optional;
import rsmap.complex.Value;

/**
 * {@code cpu_speed > 2GHz}, {@code host in ["x", "y"]}.
 *
 * <p>The rule for a host lacking the attribute, or holding a value of another type or unit (node filters and alternatives
 * asks to decide it; docs/filters.md "Missing attributes"): the comparison cannot be made, and a
 * comparison that cannot be made is false, whatever the operator, except {@code !=}, which is always
 * the negation of {@code ==}. So {@code arch != "ppc64le"} and {@code !(arch in [...])} let a host
 * without {@code arch} through, and {@code cpu_speed > 2GHz} keeps it out, as a PBS or Slurm user
 * expects of an unset resource or a missing feature: only what is known to satisfy a bound passes it.
 *
 * <p>{@code host} is the host's name, compared by host name rules (case aside, {@code node01} equals
 * {@code node01.example.org}).
 */
public record Comparison(String attribute, Op op, List<Literal> literals) implements Condition {
    public Comparison {
        attribute = attribute.intern(); // the hosts' names are interned too: lookups compare references
        literals = List.copyOf(literals);
        if (literals.isEmpty() || op != Op.IN && literals.size() != 1) {
            throw new IllegalArgumentException(op + " takes " + (op == Op.IN ? "at least one value" : "one value"));
        }
    }

    /** A comparison with one literal. */
    public static Comparison of(String attribute, Op op, Literal literal) {
        return new Comparison(attribute, op, List.of(literal));
    }

    @Override
    public Kind kind() {
        return Kind.COMPARISON;
    }

    public boolean isHost() {
        return attribute == NodeAttributes.HOST; // both interned
    }

    @Override
    public boolean test(Node node) {
        if (isHost()) {
            boolean equal = false;
            for (int i = 0, n = literals.size(); i < n && !equal; i++) {
                String s = literals.get(i).string;
                equal = s != null && sameHost(node.name(), s);
            }
            return op == Op.NE ? !equal : equal && (op == Op.EQ || op == Op.IN);
        }
        AttributeValue v = node.attributes().valueOrNull(attribute);
        if (op == Op.IN) {
            for (int i = 0, n = literals.size(); i < n; i++) {
                if (literals.get(i).compareWith(v) == 0) {
                    return true;
                }
            }
            return false;
        }
        int c = literals.get(0).compareWith(v);
        return c == Integer.MIN_VALUE ? op == Op.NE : op.holds(c);
    }

    /** {@link Value#hostsEqual}, without its allocations in the common cases (no domain, or equal names). */
    private static boolean sameHost(String a, String b) {
        if (a.equalsIgnoreCase(b)) {
            return true;
        }
        return (a.indexOf('.') >= 0 || b.indexOf('.') >= 0) && Value.hostsEqual(a, b);
    }

    @Override
    public Comparison decisive(Node node) {
        return this;
    }

    /** The value this comparison reads on {@code node}: the name for {@code host}, empty when not set. */
    public Optional<AttributeValue> actual(Node node) {
        return isHost() ? Optional.of(new AttributeValue.Text(node.name())) : node.attributes().get(attribute);
    }

    /**
     * Why this comparison came out as it did on {@code node}, for a host that fails; {@code negated}
     * when it failed because this comparison held under a {@code !}.
     */
    public String why(Node node, boolean negated) {
        Optional<AttributeValue> v = actual(node);
        String subject;
        if (v.isEmpty()) {
            subject = attribute + " is not set, which";
        } else if (!isHost() && literals.get(0).compareWith(v.get()) == Integer.MIN_VALUE) {
            subject = attribute + "=" + v.get() + " (" + article(v.get()) + ", not comparable with "
                    + literals.get(0) + ")";
        } else {
            subject = attribute + "=" + v.get();
        }
        return subject + (negated ? " satisfies " + this + ", which the filter negates"
                : " does not satisfy " + this);
    }

    private static String article(AttributeValue v) {
        if (v instanceof Quantity && ((Quantity) v).unit() != Quantity.Unit.NONE) {
            return ((Quantity) v).unit() == Quantity.Unit.HERTZ ? "a frequency" : "a byte count";
        }
        return v.type() == AttributeType.STRING ? "a string" : "a " + v.type();
    }

    @Override
    public String toString() {
        if (op != Op.IN) {
            return attribute + " " + op + " " + literals.get(0);
        }
        StringBuilder b = new StringBuilder(attribute).append(" in [");
        for (int i = 0; i < literals.size(); i++) {
            b.append(i == 0 ? "" : ", ").append(literals.get(i));
        }
        return b.append(']').toString();
    }
}
