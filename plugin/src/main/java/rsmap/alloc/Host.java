// A configured host: its complex_values and one pool per resource map. Slots and attributes attach here.
package rsmap.alloc;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import rsmap.map.ComplexValues;
import rsmap.map.ResourceMap;

/** One host of the cluster; {@code pools} by map name, in configured order (the pools' use is mutable). */
record Host(String name, ComplexValues values, Map<String, Pool> pools) {
    Host {
        pools = Collections.unmodifiableMap(new LinkedHashMap<>(pools));
        for (Pool p : pools.values()) {
            p.siblings = pools; // exclusions look across the host's maps
        }
    }

    /** A host as configured, every instance free. */
    static Host of(String name, ComplexValues values) {
        Map<String, Pool> pools = new LinkedHashMap<>();
        for (ResourceMap m : values.resourceMaps()) {
            pools.put(m.name(), new Pool(name, m));
        }
        return new Host(name, values, pools);
    }

    /** Whether nothing is held or reserved here at {@code time}, once reservations ended by then are gone. */
    boolean idleAt(long time) {
        pools.values().forEach(p -> p.holds.removeIf(h -> h.end() <= time));
        return pools.values().stream().allMatch(Pool::isIdle);
    }

    /** The instances of each map: identifier and the job holding it ("" when free). */
    Map<String, List<Map.Entry<String, String>>> instances() {
        Map<String, List<Map.Entry<String, String>>> out = new LinkedHashMap<>();
        pools.forEach((map, p) -> out.put(map, p.holders()));
        return out;
    }

    /** An independent copy; {@code mapping} learns which copy stands for which pool. */
    Host copy(Map<Pool, Pool> mapping) {
        Map<String, Pool> copies = new LinkedHashMap<>();
        pools.forEach((n, p) -> {
            Pool c = p.copy();
            mapping.put(p, c);
            copies.put(n, c);
        });
        return new Host(name, values, copies);
    }
}
