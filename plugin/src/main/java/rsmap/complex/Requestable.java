// Column "requestable" of a complex: whether a job may (or must) request it.
package rsmap.complex;

import java.util.Optional;
import rsmap.Chars;

/** Whether a complex can be requested: YES, NO, or FORCED (only jobs that request it may run). */
public enum Requestable {
    YES, NO, FORCED;

    public boolean isRequestable() {
        return this != NO;
    }

    public static Optional<Requestable> byName(String text) {
        for (Requestable r : values()) {
            if (Chars.keyword(text, r.name())) {
                return Optional.of(r);
            }
        }
        return Optional.empty();
    }
}
