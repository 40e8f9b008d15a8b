// The kind of an ERROR, its second argument (docs/protocol.md, "Error categories"): what a client decides by,
// never the reason's wording.
package rsmap.wire;

import java.util.Locale;
import java.util.Optional;

/**
 * A closed list: a client decides a job's fate (reschedule, job error, give up) by the category alone, so that
 * rewording a reason changes nothing. On the wire in lower case ({@link #wire}); an ERROR of a daemon older
 * than the categories has no second argument, and {@link #of} of a word not in this list is empty: a client
 * then falls back to what it did before (the table of docs/protocol.md).
 */
public enum Category {
    /** The request is sound but cannot be granted now (busy, held, a hold's deadline): reschedule, try later. */
    BUSY,
    /** The request, filter or command is wrong for this job or host's maps: the job's error, retrying will not help. */
    REFUSED,
    /** Not allowed for this peer (not the job's owner, not root or the admin, untrusted credential). */
    DENIED,
    /** A frame or argument that does not parse (bad JSON, unknown key, wrong form, another protocol version). */
    MALFORMED,
    /** The authority, a backend or the journal cannot be reached or written now: reschedule, try later. */
    UNAVAILABLE,
    /** rsmapd's own fault (a handler threw): its log has the stack trace. */
    INTERNAL;

    /** The word on the wire: the name in lower case. */
    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The category of a word on the wire; empty for anything else (a newer daemon's word, or none). */
    public static Optional<Category> of(String word) {
        for (Category c : values()) {
            if (c.wire().equals(word)) {
                return Optional.of(c);
            }
        }
        return Optional.empty();
    }

    /** The category of an ERROR frame's second argument; empty when it has none (an older daemon) or another. */
    public static Optional<Category> of(Frame error) {
        return error.args().size() >= 2 ? of(error.text(1)) : Optional.empty();
    }
}
