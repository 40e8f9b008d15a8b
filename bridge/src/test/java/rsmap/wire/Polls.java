// Test support: waits on a condition, bounded, instead of a fixed sleep: as short as the machine allows,
// and a failure says what never happened.
package rsmap.wire;

import java.time.Duration;

public final class Polls {
    /** The bound of {@link #until(String, Check)}: far above any wait the tests expect on a loaded machine. */
    public static final Duration BOUND = Duration.ofSeconds(30);
    private static final long STEP_MILLIS = 10;

    /** A condition that may throw (a query over a socket). */
    public interface Check {
        boolean holds() throws Exception;
    }

    private Polls() {
    }

    /** Returns once {@code done} holds; an AssertionError naming {@code what} after {@link #BOUND}. */
    public static void until(String what, Check done) throws Exception {
        until(what, BOUND, done);
    }

    /** Returns once {@code done} holds; an AssertionError naming {@code what} after {@code bound}. */
    public static void until(String what, Duration bound, Check done) throws Exception {
        long end = System.nanoTime() + bound.toNanos();
        while (!done.holds()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("not within " + bound.toSeconds() + " s: " + what);
            }
            Thread.sleep(STEP_MILLIS);
        }
    }
}
