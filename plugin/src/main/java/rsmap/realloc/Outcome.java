// The result of one realloc-side operation: done or refused (with why), its own answer, and what it caused.
package rsmap.realloc;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code ok} false (with {@code error}) is a refusal that changed nothing. {@code answer}: for a realloc
 * its answer, empty while it waits; for a realloc_cancel the CANCEL answer. {@code events}: the jobs
 * started and the waiting reallocs answered because of the operation, in order.
 */
public record Outcome(boolean ok, String error, Optional<Answer> answer, List<Event> events) {
    public Outcome {
        Objects.requireNonNull(error);
        Objects.requireNonNull(answer);
        events = List.copyOf(events);
    }

    static Outcome done(Optional<Answer> answer, List<Event> events) {
        return new Outcome(true, "", answer, events);
    }

    static Outcome refused(String error) {
        return new Outcome(false, error, Optional.empty(), List.of());
    }
}
