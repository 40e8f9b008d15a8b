// Where a grant's instances sit: host -> map -> their 0-based positions in the host's configured map.
package rsmap.alloc;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The instance indices of a {@link Grant}, parallel to it: the i-th position of host h, map m is the
 * position (in complex_values order) of the instance whose identifier is the grant's i-th identifier of
 * h, m. Shares of one identifier are distinct instances and so distinct positions. R names instances
 * by these (docs/realloc.md, "Granted resource-map instances in R").
 */
public record Positions(Map<String, Map<String, List<Integer>>> byHost) {
    public static final Positions NONE = new Positions(Map.of());

    public Positions {
        Map<String, Map<String, List<Integer>>> copy = new LinkedHashMap<>();
        byHost.forEach((h, maps) -> {
            Map<String, List<Integer>> m = new LinkedHashMap<>();
            maps.forEach((k, v) -> m.put(k, List.copyOf(v)));
            copy.put(h, Collections.unmodifiableMap(m));
        });
        byHost = Collections.unmodifiableMap(copy);
    }

    /** The positions of {@code picks}, in the order {@link Grant#of} lists their identifiers. */
    static Positions of(Map<Pool, int[]> picks) {
        Map<String, Map<String, List<Integer>>> out = new LinkedHashMap<>();
        picks.forEach((pool, idx) -> out.computeIfAbsent(pool.host, h -> new LinkedHashMap<>())
                .put(pool.name(), java.util.Arrays.stream(idx).boxed().toList()));
        return new Positions(out);
    }

    public boolean isEmpty() {
        return byHost.isEmpty();
    }
}
