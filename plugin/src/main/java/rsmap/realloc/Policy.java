// The order in which waiting reallocs are served among themselves: first in first out, or smallest first.
package rsmap.realloc;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * RFC 51: "A simple scheduler satisfies sched.realloc requests by the first-in-first-out principle. More
 * complex schedulers MAY ... process them out of order." A policy orders the waiting reallocs; where
 * they stand against queued jobs is {@code rsmap.alloc.ServingOrder}'s rule, whatever the policy.
 */
public interface Policy {
    /** The configuration's name of the policy. */
    String name();

    /** {@code byArrival} (oldest first) in the order they are to be served. */
    List<Waiting> order(List<Waiting> byArrival);

    /** First in, first out (the default). */
    Policy FIFO = of("fifo", Comparator.comparingLong(Waiting::place));

    /** The realloc adding the fewest instances first, ties first in first out. */
    Policy SMALLEST = of("smallest", Comparator.comparingInt(Waiting::size).thenComparingLong(Waiting::place));

    /** The policy called {@code name}: fifo or smallest. */
    static Optional<Policy> named(String name) {
        return FIFO.name().equals(name) ? Optional.of(FIFO)
                : SMALLEST.name().equals(name) ? Optional.of(SMALLEST) : Optional.empty();
    }

    private static Policy of(String name, Comparator<Waiting> order) {
        return new Policy() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public List<Waiting> order(List<Waiting> byArrival) {
                List<Waiting> out = new ArrayList<>(byArrival);
                out.sort(order);
                return out;
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }
}
