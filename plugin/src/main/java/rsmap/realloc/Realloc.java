// A running job's request to grow and/or shrink (Flux RFC 51 "Realloc"), in the request language.
package rsmap.realloc;

import java.util.Objects;
import java.util.Optional;
import rsmap.alloc.Grant;
import rsmap.request.RequestList;

/**
 * What a running job asks: {@code add} (instances to be added), {@code sub} (instances to take away)
 * and/or {@code ids} (host -> map -> identifiers: the exact instances to take away, or with {@code sub}
 * the ones it chooses from). {@code tag} is the client's matchtag: a realloc_cancel names it (RFC 51,
 * "Realloc Cancel"). RFC 51 requires at least one of add and sub; {@code ids} alone is a take-away.
 * The RFC 51 forms {@code spec_add}/{@code spec_sub} become {@code add}/{@code sub} through
 * {@link SpecRequest}, and the {@code R} form of the instances to take away becomes {@code ids} through
 * {@link RDelta#grantOf}; {@link ReallocRequest} reads all of them from JSON.
 */
public record Realloc(String job, String tag, Optional<RequestList> add, Optional<RequestList> sub, Grant ids) {
    public Realloc {
        Objects.requireNonNull(job);
        Objects.requireNonNull(tag);
        Objects.requireNonNull(add);
        Objects.requireNonNull(sub);
        Objects.requireNonNull(ids);
        if (add.isEmpty() && sub.isEmpty() && ids.isEmpty()) {
            throw new IllegalArgumentException("a realloc adds (add) or takes away (sub, ids) something");
        }
    }

    /** Whether it takes anything away. */
    public boolean takesAway() {
        return sub.isPresent() || !ids.isEmpty();
    }
}
