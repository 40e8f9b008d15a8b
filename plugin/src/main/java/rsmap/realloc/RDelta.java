// RFC 51's R_delta_add and R_delta_sub: a realloc's added or removed instances as R version 1 (RFC 20),
// and back: the instances an R names (a take-away or a release in R form) as a grant.
package rsmap.realloc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Grant;
import rsmap.alloc.Positions;
import rsmap.flux.Hostlist;
import rsmap.flux.Idset;
import rsmap.flux.R;
import rsmap.flux.RInstances;
import rsmap.flux.RLite;
import rsmap.map.ComplexValues;
import rsmap.map.Instance;
import rsmap.map.ResourceMap;

/**
 * The one place a grant becomes R (docs/realloc.md, "Granted resource-map instances in R"). A host's
 * rank is its place among the cluster's configured hosts (the order they were first configured, a
 * reconfigured host keeping its place), so one host has one rank in every delta of every job and
 * deltas combine with R's union and difference; {@code nodelist} names the delta's hosts in rank
 * order. Each map's instance indices go under {@code children}, their identifiers under
 * {@code scheduling} (writer rsmapd); {@code core} is empty, as rsmapd grants no cores.
 */
public final class RDelta {
    private RDelta() {
    }

    /**
     * R of {@code grant}, whose instances sit at {@code at} (parallel to it), with ranks from
     * {@code hosts}, the cluster's configured hosts in order. Empty for an empty grant.
     *
     * @throws IllegalArgumentException when a host of the grant is not in {@code hosts} or {@code at}
     *                                  is not parallel to {@code grant}
     */
    public static R of(Grant grant, Positions at, List<String> hosts) {
        TreeMap<Long, String> byRank = new TreeMap<>();
        List<RLite> rlite = new ArrayList<>();
        Map<String, Map<String, Map<Long, String>>> ids = new LinkedHashMap<>();
        grant.byHost().forEach((host, maps) -> {
            int rank = hosts.indexOf(host);
            if (rank < 0) {
                throw new IllegalArgumentException("host " + host + " is not configured");
            }
            byRank.put((long) rank, host);
            Map<String, Idset> children = new TreeMap<>();
            Map<String, Map<Long, String>> hostIds = new TreeMap<>();
            maps.forEach((map, identifiers) -> {
                List<Integer> positions = at.byHost().getOrDefault(host, Map.of()).getOrDefault(map, List.of());
                if (positions.size() != identifiers.size()) {
                    throw new IllegalArgumentException(host + "/" + map + ": positions not parallel to identifiers");
                }
                Map<Long, String> byIndex = new TreeMap<>();
                for (int i = 0; i < positions.size(); i++) {
                    byIndex.put((long) positions.get(i), identifiers.get(i));
                }
                children.put(map, Idset.of(byIndex.keySet().stream().mapToLong(Long::longValue).toArray()));
                hostIds.put(map, byIndex);
            });
            rlite.add(new RLite(Idset.of(rank), children));
            ids.put(host, hostIds);
        });
        return new R(rlite, Hostlist.of(new ArrayList<>(byRank.values())), 0, 0, 0, Map.of(), ids, Optional.empty());
    }

    /**
     * The instances {@code r} names, in rsmapd's instance form, as a grant: the inverse of {@link #of}
     * ({@code grantOf(of(g, at, hosts), cluster).equals(g)} when {@code at} are g's positions in
     * {@code cluster}, listed in ascending order). Hosts come from R's own nodelist (rank order, RFC 20),
     * not from the ranks {@link #of} gives, so an R re-ranked by Flux still reads right. Cores are not
     * read (rsmapd grants none). An R that names no instance is the empty grant.
     *
     * @throws ParseException naming the JSON path (in R's canonical form) when a host is not configured
     *                        in {@code cluster} or named twice, a map is not on its host, an index is
     *                        out of range, or a {@code scheduling} identifier is not the one configured
     *                        at its index ({@link RInstances})
     */
    public static Grant grantOf(R r, Cluster cluster) throws ParseException {
        Map<String, ComplexValues> hosts = cluster.hosts();
        return new Grant(RInstances.identifiers(r, host -> Optional.ofNullable(hosts.get(host)).map(RDelta::maps)));
    }

    /** Map name -> identifiers in configured order. */
    private static Map<String, List<String>> maps(ComplexValues values) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (ResourceMap m : values.resourceMaps()) {
            out.put(m.name(), m.instances().stream().map(Instance::id).toList());
        }
        return out;
    }
}
