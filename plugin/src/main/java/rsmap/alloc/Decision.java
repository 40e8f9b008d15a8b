// What an operation on the cluster decided: granted, waiting, not now, refused or done, and what it let start.
package rsmap.alloc;

import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * The answer of one operation. {@code started} lists the waiting jobs the operation let start, in
 * queue order. A REFUSED decision never changed the state. NOT_NOW (only {@link Cluster#grantNow})
 * queued nothing and granted nothing; its {@code error} says why, map by map.
 */
public record Decision(Result result, Grant grant, OptionalLong reservedStart, String error, List<Started> started) {
    public enum Result { OK, GRANTED, WAITING, NOT_NOW, REFUSED }

    /** A waiting job that started, with what it was granted. */
    public record Started(String job, Grant grant) {
    }

    public Decision {
        Objects.requireNonNull(result);
        Objects.requireNonNull(grant);
        Objects.requireNonNull(reservedStart);
        Objects.requireNonNull(error);
        started = List.copyOf(started);
    }

    static Decision ok(List<Started> started) {
        return new Decision(Result.OK, Grant.NONE, OptionalLong.empty(), "", started);
    }

    static Decision granted(Grant grant) {
        return new Decision(Result.GRANTED, grant, OptionalLong.empty(), "", List.of());
    }

    static Decision waiting(OptionalLong reservedStart) {
        return new Decision(Result.WAITING, Grant.NONE, reservedStart, "", List.of());
    }

    static Decision notNow(String why) {
        return new Decision(Result.NOT_NOW, Grant.NONE, OptionalLong.empty(), why, List.of());
    }

    /** This decision, also saying that {@code before} started first. */
    Decision after(List<Started> before) {
        return before.isEmpty() ? this : new Decision(result, grant, reservedStart, error, before);
    }

    static Decision refused(String error) {
        return new Decision(Result.REFUSED, Grant.NONE, OptionalLong.empty(), error, List.of());
    }

    public boolean isRefused() {
        return result == Result.REFUSED;
    }
}
