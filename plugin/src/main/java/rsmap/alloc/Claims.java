// The hook through which waiters that are not queued jobs (waiting reallocs) join the queue's passes.
package rsmap.alloc;

import java.util.List;

/**
 * Waiting claims on free instances other than queued jobs: the waiting reallocs of {@code rsmap.realloc}.
 * Every pass of the queue offers them freed instances in the one order {@link ServingOrder} decides.
 */
public interface Claims {
    /** The waiting claims, in the order they are served among themselves (their policy's order). */
    List<Claim> inServingOrder();

    /** One waiting claim. */
    interface Claim {
        /** Its place in the one order of waiters, from {@link Holdings#nextPlace()} when it began to wait. */
        long place();

        /**
         * Tries to be met now from what is free; a claim that is met, or can no longer be met, leaves the
         * waiting and records its answer ({@link Holdings#starts()} tells which job starts it follows).
         */
        void tryNow();
    }
}
