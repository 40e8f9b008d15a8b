// The instances a job (or an advance reservation) was granted, host by host and map by map.
package rsmap.alloc;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * host -> map -> identifiers, one entry per instance (shares repeat), in configured order. The host
 * {@value Cluster#GLOBAL} holds the maps of the global host, which belong to the job as a whole.
 */
public record Grant(Map<String, Map<String, List<String>>> byHost) {
    public static final Grant NONE = new Grant(Map.of());

    public Grant {
        Map<String, Map<String, List<String>>> copy = new LinkedHashMap<>();
        byHost.forEach((h, maps) -> {
            Map<String, List<String>> m = new LinkedHashMap<>();
            maps.forEach((k, v) -> m.put(k, List.copyOf(v)));
            copy.put(h, Collections.unmodifiableMap(m));
        });
        byHost = Collections.unmodifiableMap(copy);
    }

    /** The identifiers of {@code picks}: with {@link #resolve}, the one place instances and identifiers meet. */
    static Grant of(Map<Pool, int[]> picks) {
        Map<String, Map<String, List<String>>> out = new LinkedHashMap<>();
        picks.forEach((pool, idx) -> out.computeIfAbsent(pool.host, h -> new LinkedHashMap<>())
                .put(pool.name(), pool.idsOf(idx)));
        return new Grant(out);
    }

    /**
     * Puts the free instances of this grant, found by {@code pools} (host, map), into {@code into}; why
     * not, if a map is no longer configured or an identifier has no free instance left for {@code job}.
     */
    Optional<String> resolve(String job, BiFunction<String, String, Optional<Pool>> pools, Map<Pool, int[]> into) {
        for (var host : byHost.entrySet()) {
            for (var map : host.getValue().entrySet()) {
                Optional<Pool> p = pools.apply(host.getKey(), map.getKey());
                if (p.isEmpty()) {
                    return Optional.of("host " + host.getKey() + " has no map " + map.getKey() + " any more");
                }
                int[] idx = p.get().freeInstancesOf(map.getValue());
                if (idx.length < map.getValue().size()) {
                    return Optional.of(host.getKey() + "/" + map.getKey() + " has no free instance "
                            + map.getValue().get(idx.length) + " for job " + job);
                }
                into.put(p.get(), idx);
            }
        }
        return Optional.empty();
    }

    /**
     * Grid Engine's RSMAP manual, "WHAT A JOB SEES": SGE_HGR_&lt;name&gt; per map granted on {@code host}, identifiers
     * separated by one space, one entry per instance, plus the maps of the global host (where both
     * serve one map, their identifiers are joined in the grant's order). In the grant's order.
     */
    public Map<String, String> environment(String host) {
        Map<String, String> env = new LinkedHashMap<>();
        byHost.forEach((h, maps) -> {
            if (h.equals(host) || h.equals(Cluster.GLOBAL)) {
                maps.forEach((name, ids) -> env.merge("SGE_HGR_" + name, String.join(" ", ids),
                        (x, y) -> x + " " + y));
            }
        });
        return env;
    }

    /** This grant and {@code other}: for each host and map, this grant's identifiers, then the other's. */
    public Grant plus(Grant other) {
        Map<String, Map<String, List<String>>> out = new LinkedHashMap<>();
        for (Grant g : List.of(this, other)) {
            g.byHost.forEach((h, maps) -> maps.forEach((m, ids) -> out.computeIfAbsent(h, k -> new LinkedHashMap<>())
                    .computeIfAbsent(m, k -> new java.util.ArrayList<>()).addAll(ids)));
        }
        return new Grant(out);
    }

    /**
     * This grant without {@code other}'s identifiers, one occurrence each (shares repeat); hosts and maps
     * left with none are dropped. The inverse of {@link #plus} where {@code other} is part of this grant.
     */
    public Grant minus(Grant other) {
        Map<String, Map<String, List<String>>> out = new LinkedHashMap<>();
        byHost.forEach((h, maps) -> maps.forEach((m, list) -> {
            List<String> rest = new java.util.ArrayList<>(list);
            other.byHost.getOrDefault(h, Map.of()).getOrDefault(m, List.of()).forEach(rest::remove);
            if (!rest.isEmpty()) {
                out.computeIfAbsent(h, k -> new LinkedHashMap<>()).put(m, rest);
            }
        }));
        return new Grant(out);
    }

    public boolean isEmpty() {
        return byHost.isEmpty();
    }
}
