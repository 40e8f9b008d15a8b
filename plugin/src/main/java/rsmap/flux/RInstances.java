// rsmapd's instance form of R read back: the identifiers of the resource-map instances an R
// names by host, map and instance index, checked against what the hosts have configured.
package rsmap.flux;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import rsmap.Limits;
import rsmap.ParseException;

/**
 * The inverse of writing a grant as R (docs/realloc.md, "Granted resource-map instances in R"): rank r
 * is the r-th host of R's own nodelist in ascending rank order (RFC 20), each child other than
 * {@code core} names a resource map of that host and holds instance indices (0-based positions in the
 * host's configured map), and {@code scheduling.ids} (writer rsmapd), when present, must give each
 * index the identifier configured there. {@code core} is not read: RFC 20 requires it in every entry,
 * and rsmapd grants no cores (the job's scheduler does), as with {@code spec_add}. Another writer's
 * {@code scheduling} is not read either (RFC 20's extension point belongs to its writer).
 *
 * <p>A refusal names the JSON path of the fault in R's canonical form (entries grouped and sorted by
 * rank, as {@link R#toString()} prints it; an R written by rsmapd is already in that form), and its
 * column points there in that text; the problem names the rank and host too.
 */
public final class RInstances {
    private RInstances() {
    }

    /**
     * host -> map -> identifiers of the instances {@code r} names, hosts in rank order, maps by name,
     * identifiers in index order (shares of one identifier repeat). {@code configured} gives a host's
     * resource maps (map name -> identifiers in configured order), empty for a host not configured.
     *
     * @throws ParseException when a host is not configured or named for two ranks, a map is not on its
     *                        host, an index is out of range, or an identifier in {@code scheduling}
     *                        is not the one configured at its index
     */
    public static Map<String, Map<String, List<String>>> identifiers(R r,
            Function<String, Optional<Map<String, List<String>>>> configured) throws ParseException {
        Where execution = Where.ROOT.key("execution");
        Map<String, Long> rankOf = new HashMap<>();
        Map<Long, Map<String, List<String>>> maps = new HashMap<>();
        for (Map.Entry<Long, String> e : r.hosts().entrySet()) {
            long rank = e.getKey();
            String host = e.getValue();
            Long other = rankOf.putIfAbsent(host, rank);
            if (other != null) {
                throw refuse(r, execution.key("nodelist").invalid("host " + host + " is named for ranks " + other
                        + " and " + rank + " (rsmapd gives each host one rank)"));
            }
            Optional<Map<String, List<String>>> m = configured.apply(host);
            if (m.isEmpty()) {
                throw refuse(r, execution.key("nodelist").invalid("host " + host + " (rank " + rank
                        + ") is not configured"));
            }
            maps.put(rank, m.get());
        }
        Map<String, Map<String, List<String>>> out = new LinkedHashMap<>();
        Map<Long, String> hosts = r.hosts();
        for (int i = 0; i < r.rlite().size(); i++) {
            RLite entry = r.rlite().get(i);
            Where children = execution.key("R_lite").index(i).key("children");
            for (long rank : entry.rank().ids().toArray()) { // bounded: every rank is a distinct configured host
                String host = hosts.get(rank);
                for (Map.Entry<String, Idset> child : entry.children().entrySet()) {
                    if (child.getKey().equals("core") || child.getValue().isEmpty()) {
                        continue;
                    }
                    String map = child.getKey();
                    Where at = children.key(map);
                    List<String> instances = maps.get(rank).get(map);
                    if (instances == null) {
                        throw refuse(r, at.invalid("host " + host + " (rank " + rank + ") has no resource map "
                                + map));
                    }
                    Idset indices = child.getValue();
                    if (indices.last() >= instances.size()) { // before expanding: an idset may be 0-4294967295
                        throw refuse(r, at.invalid("host " + host + " (rank " + rank + ") has " + instances.size()
                                + " " + map + " instance" + (instances.size() == 1 ? "" : "s")
                                + (instances.isEmpty() ? "" : " (indices " + Idset.range(0, instances.size() - 1L)
                                + ")") + ", not instance " + indices.last()));
                    }
                    List<String> ids = new ArrayList<>();
                    indices.ids().forEach(index -> ids.add(instances.get((int) index)));
                    out.computeIfAbsent(host, h -> new TreeMap<>()).put(map, ids);
                }
            }
        }
        agree(r, maps);
        return out;
    }

    /** Every identifier of {@code scheduling.ids} is the one configured at its index. */
    private static void agree(R r, Map<Long, Map<String, List<String>>> maps) throws ParseException {
        Where ids = Where.ROOT.key("scheduling").key("ids");
        Map<String, Long> rankOf = new HashMap<>();
        r.hosts().forEach((rank, host) -> rankOf.put(host, rank));
        for (var host : r.ids().entrySet()) {
            for (var map : host.getValue().entrySet()) {
                if (map.getKey().equals("core")) {
                    continue; // not read, as the cores themselves
                }
                // R's constructor holds every index named here to one its host's rank holds under the map,
                // so the map is configured there and the index in range (checked above)
                List<String> instances = maps.get(rankOf.get(host.getKey())).get(map.getKey());
                for (var index : map.getValue().entrySet()) {
                    String configured = instances.get((int) (long) index.getKey());
                    if (!configured.equals(index.getValue())) {
                        throw refuse(r, ids.key(host.getKey()).key(map.getKey()).key(Long.toString(index.getKey()))
                                .invalid(host.getKey() + " " + map.getKey() + " instance " + index.getKey() + " is "
                                        + configured + ", not " + index.getValue()));
                    }
                }
            }
        }
    }

    private static ParseException refuse(R r, Where.Invalid invalid) {
        return Documents.refuse(r.toString(), invalid, Limits.DEFAULT);
    }
}
