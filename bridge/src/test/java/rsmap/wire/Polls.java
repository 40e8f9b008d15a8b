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
        if (!await(bound, done)) {
            throw new AssertionError("not within " + bound.toMillis() / 1000.0 + " s: " + what);
        }
    }

    /**
     * Returns once {@code done} holds (true) or {@code bound} passed (false): for a wait after which the test
     * asserts what it awaited in its own words, or goes on to see what happened instead.
     */
    public static boolean await(Duration bound, Check done) throws Exception {
        long end = System.nanoTime() + bound.toNanos();
        while (!done.holds()) {
            if (System.nanoTime() - end > 0) {
                return false;
            }
            Thread.sleep(STEP_MILLIS);
        }
        return true;
    }

    /** A value that may throw (a command's answer, a process's output). */
    public interface Attempt<T> {
        T get() throws Exception;
    }

    /** Whether an attempt's value is the one awaited. */
    public interface Accept<T> {
        boolean test(T value) throws Exception;
    }

    /**
     * Makes {@code attempt} again until {@code done} accepts its value or {@code bound} passed, and returns the
     * last value: for a step retried until it succeeds, the caller asserting on what it finally gave.
     */
    public static <T> T retry(Duration bound, Attempt<T> attempt, Accept<T> done) throws Exception {
        long end = System.nanoTime() + bound.toNanos();
        T value = attempt.get();
        while (!done.test(value) && System.nanoTime() - end < 0) {
            Thread.sleep(STEP_MILLIS);
            value = attempt.get();
        }
        return value;
    }
}
