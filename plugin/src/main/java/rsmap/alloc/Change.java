// What trying a realloc on a running job came to: met (with what it added and took away), not yet, or never.
package rsmap.alloc;

import java.util.Map;
import java.util.Objects;

/**
 * The outcome of {@link Holdings#change}. MET changed the job: {@code added} is now in its grant,
 * {@code removed} out of it and held, being given back, until it is released. NOT_YET and NEVER changed
 * nothing; NEVER says why the change can never be made. {@code addedAt} and {@code removedAt} are where
 * those instances sit in their hosts' maps, parallel to {@code added} and {@code removed}.
 */
public record Change(Kind kind, Grant added, Grant removed, Positions addedAt, Positions removedAt, String why) {
    public enum Kind { MET, NOT_YET, NEVER }

    public Change {
        Objects.requireNonNull(kind);
        Objects.requireNonNull(added);
        Objects.requireNonNull(removed);
        Objects.requireNonNull(addedAt);
        Objects.requireNonNull(removedAt);
        Objects.requireNonNull(why);
    }

    static Change met(Map<Pool, int[]> added, Map<Pool, int[]> removed) {
        return new Change(Kind.MET, Grant.of(added), Grant.of(removed), Positions.of(added), Positions.of(removed), "");
    }

    static final Change NOT_YET = new Change(Kind.NOT_YET, Grant.NONE, Grant.NONE, Positions.NONE, Positions.NONE, "");

    static Change never(String why) {
        return new Change(Kind.NEVER, Grant.NONE, Grant.NONE, Positions.NONE, Positions.NONE, why);
    }
}
