// The tree of a node filter: comparisons joined by && and ||, negated by !.
package rsmap.node;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A closed family; {@link #kind()} dispatches. {@link #toString()} prints the canonical form with as
 * few parentheses as the precedence {@code !} over {@code &&} over {@code ||} allows (a negated
 * comparison keeps its parentheses: {@code !(host == "x")}). Nested {@code &&} (and nested {@code ||})
 * are flattened on construction, so that a canonical form parses back to an equal tree.
 */
public sealed interface Condition permits Condition.All, Condition.Any, Condition.Not, Comparison {
    enum Kind { ALL, ANY, NOT, COMPARISON }

    Kind kind();

    /** Whether {@code node} passes; allocates nothing. */
    boolean test(Node node);

    /**
     * The comparison that decided the outcome on {@code node}: for {@code &&} its first failing term's
     * (its first term's when all hold), for {@code ||} its first holding term's (its first term's when
     * none holds), for {@code !} its operand's. Allocates nothing: a failing host's report costs about
     * one more test.
     */
    Comparison decisive(Node node);

    /** Every term must hold: {@code a && b && c}. */
    record All(List<Condition> terms) implements Condition {
        public All {
            terms = flatten(terms, Kind.ALL);
        }

        @Override
        public Kind kind() {
            return Kind.ALL;
        }

        @Override
        public boolean test(Node node) {
            for (int i = 0, n = terms.size(); i < n; i++) {
                if (!terms.get(i).test(node)) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public Comparison decisive(Node node) {
            for (int i = 0, n = terms.size(); i < n; i++) {
                if (!terms.get(i).test(node)) {
                    return terms.get(i).decisive(node);
                }
            }
            return terms.get(0).decisive(node);
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder();
            for (Condition c : terms) {
                b.append(b.length() == 0 ? "" : " && ");
                b.append(c.kind() == Kind.ANY ? "(" + c + ")" : c.toString());
            }
            return b.toString();
        }
    }

    /** One term must hold: {@code a || b || c}. */
    record Any(List<Condition> terms) implements Condition {
        public Any {
            terms = flatten(terms, Kind.ANY);
        }

        @Override
        public Kind kind() {
            return Kind.ANY;
        }

        @Override
        public boolean test(Node node) {
            for (int i = 0, n = terms.size(); i < n; i++) {
                if (terms.get(i).test(node)) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public Comparison decisive(Node node) {
            for (int i = 0, n = terms.size(); i < n; i++) {
                if (terms.get(i).test(node)) {
                    return terms.get(i).decisive(node);
                }
            }
            return terms.get(0).decisive(node);
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder();
            for (Condition c : terms) {
                b.append(b.length() == 0 ? "" : " || ").append(c);
            }
            return b.toString();
        }
    }

    /** The operand must not hold: {@code !(a)}. */
    record Not(Condition operand) implements Condition {
        public Not {
            Objects.requireNonNull(operand);
        }

        @Override
        public Kind kind() {
            return Kind.NOT;
        }

        @Override
        public boolean test(Node node) {
            return !operand.test(node);
        }

        @Override
        public Comparison decisive(Node node) {
            return operand.decisive(node);
        }

        @Override
        public String toString() {
            return "!" + (operand.kind() == Kind.NOT ? operand.toString() : "(" + operand + ")");
        }
    }

    /** Nested terms of the same kind spliced in; at least two terms in all. */
    private static List<Condition> flatten(List<Condition> terms, Kind kind) {
        List<Condition> out = new ArrayList<>(terms.size());
        for (Condition c : terms) {
            Objects.requireNonNull(c);
            if (c.kind() == kind) {
                out.addAll(kind == Kind.ALL ? ((All) c).terms() : ((Any) c).terms());
            } else {
                out.add(c);
            }
        }
        if (out.size() < 2) {
            throw new IllegalArgumentException(kind + " needs at least two terms");
        }
        return List.copyOf(out);
    }
}
