// Whether one host passes a filter and, if not, which comparison of which filter failed.
package rsmap.node;

import java.util.Objects;
import java.util.Optional;

/** A host refusing a job names the attribute that failed: {@link Failure#attribute()}. */
public record Verdict(String host, Optional<Failure> failure) {
    public Verdict {
        Objects.requireNonNull(host);
        Objects.requireNonNull(failure);
    }

    /**
     * @param source     which filter failed: {@link Filters#ADMIN} (the admin limit) or {@link Filters#JOB}
     * @param comparison the comparison that failed the host (docs/filters.md "Which comparison failed"):
     *                   false on it, or true under a {@code !}
     * @param node       the host, for the report; {@link #why()} renders it only when asked
     */
    public record Failure(String source, Comparison comparison, Node node) {
        public Failure {
            Objects.requireNonNull(source);
            Objects.requireNonNull(comparison);
            Objects.requireNonNull(node);
        }

        /** The attribute of the failing comparison ({@code host} for the host name). */
        public String attribute() {
            return comparison.attribute();
        }

        /** One line, e.g. {@code cpu_speed=1.8GHz does not satisfy cpu_speed > 2GHz}. */
        public String why() {
            return comparison.why(node, comparison.test(node));
        }

        /** {@code admin limit: why} or {@code job filter: why}. */
        @Override
        public String toString() {
            return (source.equals(Filters.ADMIN) ? "admin limit: " : "job filter: ") + why();
        }
    }

    static Verdict pass(String host) {
        return new Verdict(host, Optional.empty());
    }

    static Verdict fail(String host, Failure failure) {
        return new Verdict(host, Optional.of(failure));
    }

    public boolean passed() {
        return failure.isEmpty();
    }
}
