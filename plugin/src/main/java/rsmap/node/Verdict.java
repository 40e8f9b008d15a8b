// Whether one host passes a filter and, if not, which comparison of which filter failed (issue 15).
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
     * @param attribute  the attribute of the failing comparison ({@code host} for the host name)
     * @param comparison the first comparison that failed (docs/filters.md "Which comparison failed")
     * @param why        one line, e.g. {@code cpu_speed=1.8GHz does not satisfy cpu_speed > 2GHz}
     */
    public record Failure(String source, String attribute, Comparison comparison, String why) {
        public Failure {
            Objects.requireNonNull(source);
            Objects.requireNonNull(attribute);
            Objects.requireNonNull(comparison);
            Objects.requireNonNull(why);
        }

        /** {@code admin limit: why} or {@code job filter: why}. */
        @Override
        public String toString() {
            return (source.equals(Filters.ADMIN) ? "admin limit: " : "job filter: ") + why;
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
