// A job with its ways to run, as submitted: one or more options, its run time and -R y.
package rsmap.place;

import java.util.List;
import java.util.Objects;

/**
 * {@code options} in the user's order (index 0 first). A plain placed submit is a job with one option;
 * {@code alternatives} says whether the user gave a list (the answer then names the one chosen).
 */
public record PlacedJob(String id, List<Option> options, boolean alternatives, long runtime, boolean reserve) {
    public PlacedJob {
        Objects.requireNonNull(id);
        options = List.copyOf(options);
        if (options.isEmpty()) {
            throw new IllegalArgumentException("a job has at least one option");
        }
        if (runtime < 0) {
            throw new IllegalArgumentException("negative runtime");
        }
    }
}
