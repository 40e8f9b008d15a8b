// The demand of every resource map request of a job, or why the job can never be served where it runs.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;
import rsmap.request.ResourceRequest;

/**
 * A job's demands, computed once per job and configuration: either {@link Each} (one {@link Demand}
 * per request, in request order) or {@link Unserved} (a host of the job is unknown or has no slot, has
 * a requested map neither itself nor on the global host, or an amount is beyond counting); a job of the
 * second kind is refused.
 */
sealed interface Demands permits Demands.Each, Demands.Unserved {

    /**
     * The demands of every request of {@code job}, given the configured {@code hosts}; the first unknown
     * host, host without a slot, or request that cannot be served decides. {@code serving} finds the pool
     * that serves a map on a host: the host's own, else the global host's.
     */
    static Demands of(JobSpec job, Set<String> hosts, BiFunction<String, String, Optional<Pool>> serving) {
        for (Map.Entry<String, Integer> h : job.hosts().entrySet()) {
            if (!hosts.contains(h.getKey())) {
                return new Unserved("unknown host " + h.getKey());
            }
            if (h.getValue() < 1) {
                return new Unserved("host " + h.getKey() + " has " + h.getValue() + " slots; a job has at least one on"
                        + " each host");
            }
        }
        List<Demand> all = new ArrayList<>();
        for (ResourceRequest r : job.request().resourceRequests()) {
            Map<Pool, Integer> needs = new LinkedHashMap<>();
            for (Map.Entry<String, Integer> h : job.hosts().entrySet()) {
                long n = Demand.takenOn(r, job, h.getKey(), h.getValue());
                if (n == 0) {
                    continue;
                }
                Optional<Pool> pool = serving.apply(h.getKey(), r.name());
                if (pool.isEmpty()) {
                    return new Unserved(Explanation.unserved(h.getKey(), r.name()));
                }
                long total = needs.getOrDefault(pool.get(), 0) + n;
                if (total > Integer.MAX_VALUE) {
                    return new Unserved("request " + r + " asks for more instances than can exist");
                }
                needs.put(pool.get(), (int) total);
            }
            all.add(new Demand(r, needs, job.keys().pinOf(r)));
        }
        return new Each(all);
    }

    /** Why the job cannot be served, if it cannot. */
    Optional<String> refusal();

    /** The demands, if the job can be served. */
    Optional<Each> each();

    record Unserved(String why) implements Demands {
        @Override
        public Optional<String> refusal() {
            return Optional.of(why);
        }

        @Override
        public Optional<Each> each() {
            return Optional.empty();
        }
    }

    record Each(List<Demand> list) implements Demands {
        public Each {
            list = List.copyOf(list);
        }

        @Override
        public Optional<String> refusal() {
            return Optional.empty();
        }

        @Override
        public Optional<Each> each() {
            return Optional.of(this);
        }

        /** Every pool the job draws on, in request order. */
        Set<Pool> pools() {
            Set<Pool> mine = new LinkedHashSet<>();
            list.forEach(d -> mine.addAll(d.perPool().keySet()));
            return mine;
        }

        /** Whether every pool has at least as many unheld instances as the job needs from it: the cheap first test. */
        boolean enoughFree() {
            for (Demand d : list) {
                for (Map.Entry<Pool, Integer> e : d.perPool().entrySet()) {
                    if (e.getKey().free() < e.getValue()) {
                        return false;
                    }
                }
            }
            return true;
        }

        /**
         * The instances for every request, each pool offering what {@code available} says; empty when
         * any request cannot be met.
         */
        Optional<Map<Pool, int[]>> place(Function<Pool, boolean[]> available) {
            Map<Pool, int[]> all = new LinkedHashMap<>();
            for (Demand d : list) {
                Map<Pool, boolean[]> offered = new LinkedHashMap<>();
                for (Pool p : d.perPool().keySet()) {
                    boolean[] a = available.apply(p);
                    Exclusions.unmarkPartnersOf(p, a, all); // no partner of what an earlier request took
                    offered.put(p, a);
                }
                Optional<Map<Pool, int[]>> picks = Placement.place(d.request(), d.pin(), d.perPool(), offered);
                if (picks.isEmpty()) {
                    return Optional.empty();
                }
                all.putAll(picks.get());
            }
            return Optional.of(all);
        }
    }
}
