// The configured hosts by name, and which pool serves a map on a host: its own, else the global host's.
package rsmap.alloc;

import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.map.ComplexValues;

/** Hosts in the order they were first configured; a reconfigured host keeps its place. */
final class Hosts {
    private final Map<String, Host> byName = new LinkedHashMap<>();
    /** The hosts that have a map, in order: an authority knows thousands of hosts with none. */
    private final Map<String, Host> withMaps = new LinkedHashMap<>();

    Optional<Host> get(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    void put(Host host) {
        byName.put(host.name(), host);
        if (host.pools().isEmpty()) {
            withMaps.remove(host.name());
        } else {
            withMaps.put(host.name(), host);
        }
    }

    /** The hosts with at least one map, in order. */
    Collection<Host> withMaps() {
        return Collections.unmodifiableCollection(withMaps.values());
    }

    Set<String> names() {
        return Collections.unmodifiableSet(byName.keySet());
    }

    Collection<Host> all() {
        return Collections.unmodifiableCollection(byName.values());
    }

    /** The pools of {@code host} by map name; none for a host not configured. */
    Map<String, Pool> pools(String host) {
        Host h = byName.get(host);
        return h == null ? Map.of() : h.pools();
    }

    /** The pool of {@code map} on {@code host} itself. */
    Optional<Pool> pool(String host, String map) {
        return Optional.ofNullable(pools(host).get(map));
    }

    /** The pool serving {@code map} on {@code host}: the host's own, else the global host's (Grid Engine's RSMAP manual). */
    Optional<Pool> serving(String host, String map) {
        return pool(host, map).or(() -> pool(Cluster.GLOBAL, map));
    }

    /** The demands of {@code job} on these hosts, or why a host is unknown, has no slot, or cannot serve a map. */
    Demands demandsOf(JobSpec job) {
        return Demands.of(job, names(), this::serving);
    }

    /** Each host's configuration, in order. */
    Map<String, ComplexValues> values() {
        Map<String, ComplexValues> out = new LinkedHashMap<>();
        byName.forEach((name, h) -> out.put(name, h.values()));
        return Collections.unmodifiableMap(out);
    }

    /** Each host's pools, in order. */
    Map<String, Map<String, Pool>> pools() {
        Map<String, Map<String, Pool>> out = new LinkedHashMap<>();
        byName.forEach((name, h) -> out.put(name, h.pools()));
        return out;
    }

    /** An independent copy; {@code mapping} learns which copy stands for which pool. */
    Hosts copy(Map<Pool, Pool> mapping) {
        Hosts c = new Hosts();
        byName.forEach((name, h) -> c.put(h.copy(mapping)));
        return c;
    }

    /** A new, empty pool-to-copy mapping for {@link #copy}: pools are told apart by identity. */
    static Map<Pool, Pool> mapping() {
        return new IdentityHashMap<>();
    }
}
