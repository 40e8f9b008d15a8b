// The answer to a realloc (Flux RFC 51 response): its alloc_id, its type, what changed or why not.
package rsmap.realloc;

import java.util.Objects;
import rsmap.alloc.Grant;
import rsmap.alloc.Positions;

/**
 * RFC 51 response: {@code allocId} unique and increasing over every answer; on SUCCESS {@code added}
 * (now in the job's grant) and/or {@code removed} (out of it, held until the job releases them); on
 * DENY, CANCEL and UNSUPPORTED {@code error} says why. {@code addedAt} and {@code removedAt} are the
 * instances' positions in their hosts' maps, parallel to {@code added} and {@code removed}: with them
 * {@link RDelta} renders RFC 51's {@code R_delta_add} and {@code R_delta_sub}.
 */
public record Answer(String job, String tag, long allocId, Type type, Grant added, Grant removed,
                     Positions addedAt, Positions removedAt, String error) {
    /** RFC 51 response types, with the RFC's numbers. */
    public enum Type {
        SUCCESS(0), DENY(1), CANCEL(2), UNSUPPORTED(3);

        private final int code;

        Type(int code) {
            this.code = code;
        }

        public int code() {
            return code;
        }
    }

    public Answer {
        Objects.requireNonNull(job);
        Objects.requireNonNull(tag);
        Objects.requireNonNull(type);
        Objects.requireNonNull(added);
        Objects.requireNonNull(removed);
        Objects.requireNonNull(addedAt);
        Objects.requireNonNull(removedAt);
        Objects.requireNonNull(error);
        if (type == Type.SUCCESS != error.isEmpty()) {
            throw new IllegalArgumentException("a SUCCESS has no error, any other answer has one");
        }
    }
}
