// The tainted identifiers of every host's maps (docs/health.md): kept apart from the pools so that a
// reconfigured host (new pools) keeps its taints, and applied to the pools that place grants.
package rsmap.alloc;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * host -> map -> identifier -> why. A tainted identifier's instances (every share of a card) are never
 * offered to a placement (JOB_START, REALLOC, alternatives, PLACE); a job that holds one keeps it.
 */
final class Taints {
    private final Map<String, Map<String, Map<String, String>>> byHost = new LinkedHashMap<>();

    Taints copy() {
        Taints c = new Taints();
        byHost.forEach((h, maps) -> {
            Map<String, Map<String, String>> m = new LinkedHashMap<>();
            maps.forEach((map, ids) -> m.put(map, new LinkedHashMap<>(ids)));
            c.byHost.put(h, m);
        });
        return c;
    }

    /** Taints (why not null) or clears {@code id} of {@code pool} on {@code host}, kept for its next pools. */
    void set(Pool pool, String host, String id, String why) {
        pool.setTaint(id, why);
        if (why != null) {
            byHost.computeIfAbsent(host, h -> new LinkedHashMap<>()).computeIfAbsent(pool.name(), m -> new LinkedHashMap<>())
                    .put(id, why);
        } else {
            Map<String, String> ids = byHost.getOrDefault(host, Map.of()).get(pool.name());
            if (ids != null) {
                ids.remove(id);
            }
        }
    }

    /** Why {@code host} has no instance {@code id} of {@code map}, if it has none. */
    static java.util.Optional<String> unknown(Hosts hosts, String host, String map, String id) {
        java.util.Optional<Pool> p = hosts.pool(host, map);
        if (p.isEmpty()) {
            return java.util.Optional.of("host " + host + " has no resource map " + map);
        }
        return p.get().indexesOf(id).length == 0 ? java.util.Optional.of(host + "/" + map + " has no instance " + id)
                : java.util.Optional.empty();
    }

    /** The tainted identifiers of {@code map} on {@code host} and why. */
    Map<String, String> of(String host, String map) {
        return Map.copyOf(byHost.getOrDefault(host, Map.of()).getOrDefault(map, Map.of()));
    }

    /** Marks the taints of {@code host} in its (new) pools; identifiers it no longer has mark nothing. */
    void applyTo(Host host) {
        byHost.getOrDefault(host.name(), Map.of()).forEach((map, ids) -> {
            Pool p = host.pools().get(map);
            if (p != null) {
                ids.forEach(p::setTaint);
            }
        });
    }
}
