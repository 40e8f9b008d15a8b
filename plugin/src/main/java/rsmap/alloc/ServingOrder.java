// The one order in which queued jobs and waiting reallocs compete for freed instances.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Decides who is offered freed instances first, queued jobs or waiting reallocs. The rule:
 * <p>
 * Every queued job and every waiting realloc takes a place in one sequence when it begins to wait
 * (its arrival). A pass (after every finish, release, host change, reservation start or end) walks
 * that sequence from the oldest place on, and whoever can be met with what is free then is met. The
 * places of reallocs go to the waiting reallocs in their policy's order: first in, first out by
 * default, so each realloc keeps its own place; with "smallest first" the smallest waiting realloc
 * takes the earliest place any realloc holds. A waiter that cannot be met is passed over and those
 * behind it may still be met (backfill, as in the queue of jobs).
 * <p>
 * So neither side can starve the other: a realloc is never offered instances before a job that began
 * to wait ahead of it, however many reallocs its job sends (each new one takes a place behind the whole
 * queue), and a job is never offered instances before a realloc that began to wait ahead of it,
 * however many jobs are submitted. Only backfill lets a later waiter overtake an earlier one, and only
 * with instances the earlier one cannot use yet; a job asking for resource reservation keeps its
 * planned instances against every later waiter, reallocs included.
 */
final class ServingOrder {
    private ServingOrder() {
    }

    /** A turn in a pass: a queued job or a waiting claim (exactly one of the two is set). */
    record Turn(JobSpec job, Claims.Claim claim) {
    }

    /**
     * The turns of one pass: {@code jobs} in queue order with their {@code places}, and {@code claims}
     * in serving order, the claims' places given out ascending in that order.
     */
    static List<Turn> of(List<JobSpec> jobs, Map<String, Long> places, List<Claims.Claim> claims) {
        long[] slots = claims.stream().mapToLong(Claims.Claim::place).toArray();
        Arrays.sort(slots);
        List<Turn> turns = new ArrayList<>(jobs.size() + claims.size());
        int c = 0;
        for (JobSpec job : jobs) {
            long at = places.getOrDefault(job.id(), Long.MIN_VALUE);
            for (; c < slots.length && slots[c] < at; c++) {
                turns.add(new Turn(null, claims.get(c)));
            }
            turns.add(new Turn(job, null));
        }
        for (; c < slots.length; c++) {
            turns.add(new Turn(null, claims.get(c)));
        }
        return turns;
    }
}
