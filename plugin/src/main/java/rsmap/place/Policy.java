// The admin policy that orders a job's alternatives before the user's order does.
package rsmap.place;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * PBS's alternatives design: "The resource request options are prioritized first by site-policy, then by the order
 * provided by the user." USER keeps the user's order; FEWEST puts the options asking for the fewest
 * slots in all first; RANKING puts options by the position of their {@code label} in {@code ranking},
 * options without a listed label after all listed ones. Ties always go by the user's order.
 */
public record Policy(Kind kind, List<String> ranking) {
    public enum Kind { USER, FEWEST, RANKING }

    public static final Policy USER = new Policy(Kind.USER, List.of());

    public Policy {
        java.util.Objects.requireNonNull(kind);
        ranking = List.copyOf(ranking);
        if (kind != Kind.RANKING && !ranking.isEmpty()) {
            throw new IllegalArgumentException("'ranking' goes with \"alternatives\":\"ranking\" only");
        }
    }

    /** {@code user}, {@code fewest} or {@code ranking} (with its ranking). */
    public static Policy of(String kind, List<String> ranking) {
        for (Kind k : Kind.values()) {
            if (k.name().toLowerCase(Locale.ROOT).equals(kind)) {
                return new Policy(k, ranking);
            }
        }
        throw new IllegalArgumentException("alternatives policy '" + kind + "' is none of user, fewest, ranking");
    }

    /** The indexes of {@code options} (the user's order) in the order they are tried. */
    public List<Integer> order(List<Option> options) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < options.size(); i++) {
            out.add(i);
        }
        Comparator<Integer> by;
        switch (kind) {
            case USER:
                return out;
            case FEWEST:
                by = Comparator.comparingLong(i -> options.get(i).totalSlots());
                break;
            case RANKING:
                by = Comparator.comparingInt(i -> rank(options.get(i).label()));
                break;
            default:
                throw new AssertionError(kind);
        }
        out.sort(by.thenComparingInt(i -> i)); // stable: the user's order breaks ties
        return out;
    }

    private int rank(String label) {
        int r = label.isEmpty() ? -1 : ranking.indexOf(label);
        return r < 0 ? Integer.MAX_VALUE : r;
    }

    @Override
    public String toString() {
        return kind.name().toLowerCase(Locale.ROOT);
    }
}
