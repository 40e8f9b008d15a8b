// Where the domain's refusals meet the wire: a Refusal becomes the ERROR of its category, and an authority's
// ERROR category becomes a Refusal of the same kind (docs/protocol.md, "Error categories").
package rsmap.daemon.state;

import java.util.Optional;
import rsmap.wire.Category;
import rsmap.wire.Session;

/** One to one, both ways; an exhaustive switch, so that a new kind or category does not compile unmapped. */
public final class WireErrors {
    private WireErrors() {
    }

    /** The wire's category of {@code kind}. */
    static Category category(Refusal.Kind kind) {
        return switch (kind) {
            case BUSY -> Category.BUSY;
            case REFUSED -> Category.REFUSED;
            case DENIED -> Category.DENIED;
            case MALFORMED -> Category.MALFORMED;
            case UNAVAILABLE -> Category.UNAVAILABLE;
            case INTERNAL -> Category.INTERNAL;
        };
    }

    /** The kind of an ERROR's {@code category}; {@code otherwise} where it has none (an older daemon). */
    public static Refusal.Kind kind(Optional<Category> category, Refusal.Kind otherwise) {
        return category.map(c -> switch (c) {
            case BUSY -> Refusal.Kind.BUSY;
            case REFUSED -> Refusal.Kind.REFUSED;
            case DENIED -> Refusal.Kind.DENIED;
            case MALFORMED -> Refusal.Kind.MALFORMED;
            case UNAVAILABLE -> Refusal.Kind.UNAVAILABLE;
            case INTERNAL -> Refusal.Kind.INTERNAL;
        }).orElse(otherwise);
    }

    /** {@code r} as the wire answers it: ERROR with its category and its reason. */
    public static Session.CommandException toWire(Refusal r) {
        return new Session.CommandException(category(r.kind()), r.getMessage());
    }
}
