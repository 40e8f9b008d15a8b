// The demand of one resource map request of a job: how many instances each pool must give.
package rsmap.alloc;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import rsmap.request.ResourceRequest;

/**
 * {@code perPool} maps each pool serving the request to the instances it must give, in the order of
 * the job's hosts; a host without the map is served by the global host's map, where the amounts add up.
 * {@code pin} is the group key the request is held to (a scope=job request whose group was chosen for
 * the whole job, {@link GroupKeys}), if any.
 */
record Demand(ResourceRequest request, Map<Pool, Integer> perPool, Optional<String> pin) {
    Demand {
        perPool = Collections.unmodifiableMap(new LinkedHashMap<>(perPool));
        java.util.Objects.requireNonNull(pin);
    }

    /**
     * How many instances {@code r} takes on {@code host}, where the job has {@code slots}: YES the
     * amount per slot, HOST the amount once, JOB the amount once on the master host only (Grid Engine's RSMAP manual,
     * "How often the amount is taken").
     */
    static long takenOn(ResourceRequest r, JobSpec job, String host, int slots) {
        switch (r.complex().consumable()) {
            case YES:
                return (long) r.amount() * slots;
            case HOST:
                return r.amount();
            case JOB:
                return host.equals(job.master()) ? r.amount() : 0;
            default:
                throw new AssertionError("a resource map is always consumable");
        }
    }
}
