// Test support: waits on a condition, bounded, instead of a fixed sleep: as short as the machine allows,
// and a failure says what never happened.
package rsmap.wire;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

public final class Polls {
    /** The bound of {@link #until(String, Check)}: far above any wait the tests expect on a loaded machine. */
    public static final Duration BOUND = Duration.ofSeconds(30);
    private static final long STEP_MILLIS = 10;

    /** A condition that may throw (a query over a socket): {@code E}, what it throws beside an interrupt. */
    public interface Check<E extends Exception> {
        boolean holds() throws E, InterruptedException;
    }

    /** A value that may throw (a command's answer, a process's output). */
    public interface Attempt<T, E extends Exception> {
        T get() throws E, InterruptedException;
    }

    /** Whether an attempt's value is the one awaited. */
    public interface Accept<T, E extends Exception> {
        boolean test(T value) throws E, InterruptedException;
    }

    private Polls() {
    }

    /** Returns once {@code done} holds; an AssertionError naming {@code what} after {@link #BOUND}. */
    public static <E extends Exception> void until(String what, Check<E> done) throws E, InterruptedException {
        until(what, BOUND, done);
    }

    /** Returns once {@code done} holds; an AssertionError naming {@code what} after {@code bound}. */
    public static <E extends Exception> void until(String what, Duration bound, Check<E> done)
            throws E, InterruptedException {
        if (!await(bound, done)) {
            throw new AssertionError("not within " + bound.toMillis() / 1000.0 + " s: " + what);
        }
    }

    /**
     * Returns once {@code done} holds (true) or {@code bound} passed (false): for a wait after which the test
     * asserts what it awaited in its own words, or goes on to see what happened instead.
     */
    public static <E extends Exception> boolean await(Duration bound, Check<E> done) throws E, InterruptedException {
        long end = System.nanoTime() + bound.toNanos();
        while (!done.holds()) {
            if (System.nanoTime() - end > 0) {
                return false;
            }
            Thread.sleep(STEP_MILLIS);
        }
        return true;
    }

    /**
     * Makes {@code attempt} again until {@code done} accepts its value or {@code bound} passed, and returns the
     * last value: for a step retried until it succeeds, the caller asserting on what it finally gave.
     */
    public static <T, E extends Exception> T retry(Duration bound, Attempt<T, E> attempt, Accept<T, E> done)
            throws E, InterruptedException {
        AtomicReference<T> last = new AtomicReference<>();
        await(bound, () -> {
            last.set(attempt.get());
            return done.test(last.get());
        });
        return last.get();
    }
}
