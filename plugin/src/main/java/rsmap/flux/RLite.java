// One entry of R's execution.R_lite (Flux RFC 20): execution targets and the resources each of them holds.
package rsmap.flux;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * {@code {"rank":"0-3","children":{"core":"0-3","gpu":"0-1"}}}: every rank in {@code rank} holds the
 * same children. rsmapd writes a granted resource map's instances under the map's name, as instance
 * indices (0-based positions in the host's map); {@code core} is always there (RFC 20 requires it) and
 * may be empty when a grant holds no cores.
 *
 * @param rank      the execution targets, not empty
 * @param children  resource name -> ids, sorted by name; {@code core} present, other names never empty
 */
public record RLite(Idset rank, Map<String, Idset> children) {
    public RLite {
        Objects.requireNonNull(rank);
        if (rank.isEmpty()) {
            throw new IllegalArgumentException("an R_lite entry names at least one rank");
        }
        TreeMap<String, Idset> sorted = new TreeMap<>();
        for (Map.Entry<String, Idset> e : children.entrySet()) {
            if (!e.getValue().isEmpty() || e.getKey().equals("core")) {
                sorted.put(Objects.requireNonNull(e.getKey()), e.getValue());
            }
        }
        sorted.putIfAbsent("core", Idset.empty());
        children = Collections.unmodifiableMap(sorted);
    }

    /** The ids of {@code name} each rank holds; empty when it holds none. */
    public Idset child(String name) {
        return children.getOrDefault(name, Idset.empty());
    }

    /** True when the ranks hold nothing at all. */
    boolean holdsNothing() {
        return children.values().stream().allMatch(Idset::isEmpty);
    }
}
