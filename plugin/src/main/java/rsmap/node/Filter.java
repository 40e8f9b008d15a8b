// A node filter: which hosts a job may run on, by their attributes and name.
package rsmap.node;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import rsmap.Limits;
import rsmap.ParseException;

/**
 * A parsed filter such as {@code cpu_speed > 2GHz && !(host in ["x", "y"])}. {@link #toString()} is the
 * canonical form, which {@link #parse} reads back to an equal filter. Evaluation never throws: a
 * comparison that cannot be made is false ({@link Comparison}), and a failing host is told which
 * comparison failed ({@link #evaluate}).
 */
public final class Filter {
    private final Condition root;

    private Filter(Condition root) {
        this.root = Objects.requireNonNull(root);
    }

    /** A filter of a condition built in code. */
    public static Filter of(Condition root) {
        return new Filter(root);
    }

    public static Filter parse(String text) throws ParseException {
        return parse(text, AttributeTypes.NONE, Limits.DEFAULT);
    }

    public static Filter parse(String text, Limits limits) throws ParseException {
        return parse(text, AttributeTypes.NONE, limits);
    }

    /**
     * Reads a filter; with declared types, a literal that cannot be a value of its attribute's type,
     * or an ordering of a string or boolean attribute, is refused at its column (a typed
     * error at check time when types are declared).
     */
    public static Filter parse(String text, AttributeTypes types, Limits limits) throws ParseException {
        return new Filter(new FilterParser(text, types, limits).parse());
    }

    /** This filter checked against declared types; a refusal points into the canonical form. */
    public Filter check(AttributeTypes types, Limits limits) throws ParseException {
        return parse(toString(), types, limits);
    }

    public Condition root() {
        return root;
    }

    /** Whether {@code node} passes; allocates nothing. */
    public boolean test(Node node) {
        return root.test(node);
    }

    /** Whether {@code node} passes and, if not, the comparison that failed; the source is {@link Filters#JOB}. */
    public Verdict evaluate(Node node) {
        return evaluate(node, Filters.JOB);
    }

    Verdict evaluate(Node node, String source) {
        if (root.test(node)) {
            return Verdict.pass(node.name());
        }
        return Verdict.fail(node.name(), new Verdict.Failure(source, root.decisive(node), node));
    }

    /** Each host's verdict, in order. */
    public List<Verdict> evaluate(Collection<Node> nodes) {
        List<Verdict> out = new ArrayList<>(nodes.size());
        for (Node n : nodes) {
            out.add(evaluate(n));
        }
        return out;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Filter && ((Filter) o).root.equals(root);
    }

    @Override
    public int hashCode() {
        return root.hashCode();
    }

    /** The canonical form. */
    @Override
    public String toString() {
        return root.toString();
    }
}
