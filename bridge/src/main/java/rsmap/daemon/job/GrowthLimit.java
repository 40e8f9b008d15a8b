// How far a running job may grow by REALLOC beyond what it held at start, per map (realloc_max_grow):
// the scheduler never sees a grow, so by default a job may at most double what it started with.
package rsmap.daemon.job;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import rsmap.alloc.Grant;
import rsmap.daemon.config.MaxGrow;
import rsmap.daemon.state.Job;
import rsmap.realloc.Realloc;
import rsmap.request.ResourceRequest;
import rsmap.daemon.state.JobId;

/**
 * A REALLOC that adds is refused (DENY, naming the limit) when the job would then hold more instances of
 * a map - held, to give back and asked for together - than its ceiling: what it held of that map at start
 * plus {@code realloc_max_grow} for the map (docs/realloc.md, "How far a job may grow"). What it held at
 * start is taken at its first realloc here (before that realloc changes anything), so it is the start
 * grant, or after a restart of rsmapd what it held then. Called under the daemon's lock.
 */
final class GrowthLimit {
    /** Job -> map -> instances held at its first realloc here. */
    private final Map<JobId, Map<String, Integer>> atStart = new HashMap<>();

    /** Why {@code r} would take {@code job} over its ceiling, if it would. */
    Optional<String> refusal(Job job, Realloc r, MaxGrow limit, String host) {
        Map<String, Integer> holds = counts(job.grant().plus(job.releasing()), host);
        Map<String, Integer> start = atStart.computeIfAbsent(job.id(), id -> holds);
        if (r.add().isEmpty()) {
            return Optional.empty();
        }
        Map<String, Integer> asked = new LinkedHashMap<>();
        for (ResourceRequest q : r.add().get().resourceRequests()) {
            asked.merge(q.complex().name(), q.amount(), Integer::sum);
        }
        for (Map.Entry<String, Integer> e : asked.entrySet()) {
            String map = e.getKey();
            int held = start.getOrDefault(map, 0);
            int ceiling = held + limit.of(map, held);
            int after = holds.getOrDefault(map, 0) + e.getValue();
            if (after > ceiling) {
                return Optional.of("job " + job.id() + " would hold " + after + " " + map + " instances, over its limit of "
                        + ceiling + " (" + held + " at start + realloc_max_grow " + limit.describe(map)
                        + " for " + map + "): the scheduler does not see a grow");
            }
        }
        return Optional.empty();
    }

    /** Drops what it remembers of jobs no longer held here. */
    void retain(java.util.Set<JobId> jobs) {
        atStart.keySet().retainAll(jobs);
    }

    private static Map<String, Integer> counts(Grant g, String host) {
        Map<String, Integer> out = new HashMap<>();
        g.byHost().getOrDefault(host, Map.of()).forEach((map, ids) -> out.merge(map, ids.size(), Integer::sum));
        return out;
    }
}
