// The daemon's refusal of a command, with its kind: what a client decides a job's fate by, never the wording
// (docs/protocol.md, "Error categories"). The domain's error; the wire turns it into ERROR (WireErrors).
package rsmap.daemon.state;

import java.util.Objects;

/**
 * Thrown by the rooms (the job's life, reallocation, MIG, health, the authority's link) and caught once, where a
 * command is answered ({@code Commands}); no room below names the wire's exception. Carries no stack trace: a
 * refusal is an answer, not a fault (a fault is a RuntimeException, which the wire answers {@code internal}).
 */
public class Refusal extends Exception {
    private static final long serialVersionUID = 1L;

    /** The kinds of refusal, one for each of the wire's categories (WireErrors maps them one to one). */
    public enum Kind {
        /** Sound, but not now (busy, held, a hold's deadline): reschedule, try later. */
        BUSY,
        /** Wrong for this job or host's maps: the job's error, retrying will not help. */
        REFUSED,
        /** Not allowed for this peer. */
        DENIED,
        /** An argument that does not parse. */
        MALFORMED,
        /** The authority, a backend or the journal cannot be reached or written now: try later. */
        UNAVAILABLE,
        /** rsmapd's own fault. */
        INTERNAL
    }

    private final Kind kind;

    public Refusal(Kind kind, String message) {
        super(message, null, false, false);
        this.kind = Objects.requireNonNull(kind);
    }

    public Kind kind() {
        return kind;
    }

    public static Refusal busy(String message) {
        return new Refusal(Kind.BUSY, message);
    }

    public static Refusal refused(String message) {
        return new Refusal(Kind.REFUSED, message);
    }

    public static Refusal denied(String message) {
        return new Refusal(Kind.DENIED, message);
    }

    public static Refusal malformed(String message) {
        return new Refusal(Kind.MALFORMED, message);
    }

    public static Refusal unavailable(String message) {
        return new Refusal(Kind.UNAVAILABLE, message);
    }

    public static Refusal internal(String message) {
        return new Refusal(Kind.INTERNAL, message);
    }
}
