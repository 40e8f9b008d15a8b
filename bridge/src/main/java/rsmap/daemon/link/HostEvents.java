// The host's events on their way to its authority: queued while they wait for the link's next HOST_EVENT,
// gathered in bursts, and replaced by a new registration when too many were missed or the maps changed.
package rsmap.daemon.link;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** Thread-safe: the daemon's rooms add under the daemon's lock, the link's thread takes. */
final class HostEvents {
    /** Events queued while the authority is away are dropped past this: the next registration says all. */
    static final int MAX_QUEUED = 10_000;
    /** How long the link gathers events before it sends them in one HOST_EVENT. */
    static final long BATCH_MS = 50;

    private final Deque<String> queue = new ArrayDeque<>();
    /** Events were dropped or the maps changed: the next send is a new registration. */
    private boolean reRegister;

    /** What the link sends next: the events in order, or (when {@code reRegister}) a registration instead. */
    record Batch(List<String> diffs, boolean reRegister) {
        Batch {
            diffs = List.copyOf(diffs);
        }

        boolean isEmpty() {
            return diffs.isEmpty() && !reRegister;
        }
    }

    /** One event of {@code kind}; a config event (new maps) asks for a registration, which carries them. */
    synchronized void add(String kind, Supplier<String> diffJson) {
        if (kind.equals("config")) {
            reRegister = true; // the authority learns the new maps' complex_values by a registration
        } else if (queue.size() < MAX_QUEUED) {
            queue.add(diffJson.get());
        } else {
            reRegister = true; // the view at the authority would miss events: register anew instead
        }
        notifyAll();
    }

    /** A registration is about to say everything: what was queued before it goes. */
    synchronized void clear() {
        queue.clear();
    }

    /**
     * Waits up to {@code waitMs} for an event, then gathers what follows for {@link #BATCH_MS}: one round
     * trip for a burst. Empty when nothing came; interrupted: empty at once.
     */
    Batch take(long waitMs) {
        synchronized (this) {
            if (queue.isEmpty() && !reRegister) {
                try {
                    wait(waitMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return new Batch(List.of(), false);
                }
            }
            if (queue.isEmpty() && !reRegister) {
                return new Batch(List.of(), false);
            }
        }
        try {
            TimeUnit.MILLISECONDS.sleep(BATCH_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            Batch b = new Batch(new ArrayList<>(queue), reRegister);
            queue.clear();
            reRegister = false;
            return b;
        }
    }
}
