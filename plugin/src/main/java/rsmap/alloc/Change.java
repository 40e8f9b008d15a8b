// What trying a realloc on a running job came to: met (with what it added and took away), not yet, or never.
package rsmap.alloc;

import java.util.Objects;

/**
 * The outcome of {@link Holdings#change}. MET changed the job: {@code added} is now in its grant,
 * {@code removed} out of it and held, being given back, until it is released. NOT_YET and NEVER changed
 * nothing; NEVER says why the change can never be made.
 */
public record Change(Kind kind, Grant added, Grant removed, String why) {
    public enum Kind { MET, NOT_YET, NEVER }

    public Change {
        Objects.requireNonNull(kind);
        Objects.requireNonNull(added);
        Objects.requireNonNull(removed);
        Objects.requireNonNull(why);
    }

    static Change met(Grant added, Grant removed) {
        return new Change(Kind.MET, added, removed, "");
    }

    static final Change NOT_YET = new Change(Kind.NOT_YET, Grant.NONE, Grant.NONE, "");

    static Change never(String why) {
        return new Change(Kind.NEVER, Grant.NONE, Grant.NONE, why);
    }
}
