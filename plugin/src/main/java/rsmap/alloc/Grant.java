// The instances a job (or an advance reservation) was granted, host by host and map by map.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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

    static Grant of(Map<Pool, int[]> picks) {
        Map<String, Map<String, List<String>>> out = new LinkedHashMap<>();
        picks.forEach((pool, idx) -> {
            List<String> ids = new ArrayList<>(idx.length);
            for (int i : idx) {
                ids.add(pool.instances[i].id());
            }
            out.computeIfAbsent(pool.host, h -> new LinkedHashMap<>()).put(pool.name(), ids);
        });
        return new Grant(out);
    }

    public boolean isEmpty() {
        return byHost.isEmpty();
    }
}
