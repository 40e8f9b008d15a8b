// A Flux resource set R version 1 (RFC 20): what a job holds, rank by rank, with the hosts' names.
// Set operations by rank and child give the R deltas of a reallocation (RFC 51: R_delta_add, R_delta_sub).
package rsmap.flux;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BinaryOperator;
import rsmap.Limits;
import rsmap.ParseException;

/**
 * A valid R version 1. The R_lite entries are kept in one canonical grouping (ranks with equal
 * children share an entry, entries sorted by their first rank), so equal resource sets are equal R.
 *
 * @param rlite       the entries; their ranks are disjoint
 * @param nodelist    one host per rank, in ascending rank order (RFC 20)
 * @param nslots      the slot count of an allocation, 0 when absent (RFC 20: if present, above 0)
 * @param starttime   seconds since the epoch, 0 when unset (RFC 20)
 * @param expiration  seconds since the epoch, 0 when unset; above starttime when both are set
 * @param properties  property name -> the ranks it applies to (a subset of R's ranks)
 * @param ids         rsmapd's identifiers of granted instances: host -> map name -> instance index
 *                    -> identifier (written as {@code scheduling}, writer {@code rsmapd}); each index is
 *                    one the host's rank holds under that map
 * @param scheduling  another writer's {@code scheduling} object, kept as is; empty otherwise
 */
public record R(List<RLite> rlite, Hostlist nodelist, long nslots, double starttime, double expiration,
                Map<String, Idset> properties, Map<String, Map<String, Map<Long, String>>> ids,
                Optional<ObjectNode> scheduling) {
    public static final int VERSION = 1;
    /** The {@code scheduling.writer} of the instance identifiers rsmapd adds. */
    public static final String WRITER = "rsmapd";

    public R {
        rlite = canonical(rlite);
        Objects.requireNonNull(nodelist);
        Idset ranks = ranks(rlite);
        if (ranks.size() != nodelist.size()) {
            throw new IllegalArgumentException("nodelist has " + nodelist.size() + " hosts for " + ranks.size()
                    + " ranks (RFC 20: one host per rank)");
        }
        if (nslots < 0 || !(starttime >= 0) || !(expiration >= 0) || Double.isInfinite(starttime)
                || Double.isInfinite(expiration)) {
            throw new IllegalArgumentException("nslots, starttime and expiration are not negative");
        }
        if (starttime > 0 && expiration > 0 && expiration <= starttime) {
            throw new IllegalArgumentException("expiration must be after starttime (RFC 20)");
        }
        TreeMap<String, Idset> props = new TreeMap<>();
        for (Map.Entry<String, Idset> e : properties.entrySet()) {
            if (!ranks.containsAll(e.getValue())) {
                throw new IllegalArgumentException("property " + e.getKey() + " names ranks not in R");
            }
            if (!e.getValue().isEmpty()) {
                props.put(e.getKey(), e.getValue());
            }
        }
        properties = Collections.unmodifiableMap(props);
        ids = copyIds(ids, rlite, nodelist);
        Objects.requireNonNull(scheduling);
        if (!ids.isEmpty() && scheduling.isPresent()) {
            throw new IllegalArgumentException("rsmapd's identifiers and another writer's scheduling exclude each other");
        }
        scheduling = scheduling.map(ObjectNode::deepCopy);
    }

    /** An R of these entries and hosts, nothing else set. */
    public static R of(List<RLite> rlite, Hostlist nodelist) {
        return new R(rlite, nodelist, 0, 0, 0, Map.of(), Map.of(), Optional.empty());
    }

    public static R empty() {
        return of(List.of(), Hostlist.empty());
    }

    public static R parse(String text) throws ParseException {
        return parse(text, Limits.DEFAULT);
    }

    /** Reads R from JSON (or YAML); a refusal names the JSON path ({@code $.execution.nodelist: ...}). */
    public static R parse(String text, Limits limits) throws ParseException {
        JsonNode tree = Documents.read(text, limits);
        try {
            return RReader.read(tree, limits);
        } catch (Where.Invalid e) {
            throw Documents.refuse(text, e, limits);
        }
    }

    @Override
    public Optional<ObjectNode> scheduling() {
        return scheduling.map(ObjectNode::deepCopy);
    }

    public boolean isEmpty() {
        return rlite.isEmpty();
    }

    /** All ranks of R. */
    public Idset ranks() {
        return ranks(rlite);
    }

    /** Rank -> host, from the nodelist in ascending rank order. */
    public Map<Long, String> hosts() {
        Map<Long, String> m = new LinkedHashMap<>();
        long[] ranks = ranks().ids().toArray();
        for (int i = 0; i < ranks.length; i++) {
            m.put(ranks[i], nodelist.get(i));
        }
        return m;
    }

    /** Rank -> children, one map per rank (R's ranks are bounded by its nodelist, so this is bounded). */
    public Map<Long, Map<String, Idset>> byRank() {
        Map<Long, Map<String, Idset>> m = new TreeMap<>();
        for (RLite e : rlite) {
            e.rank().ids().forEach(r -> m.put(r, e.children()));
        }
        return m;
    }

    /** The resources of this R or {@code other}; a rank in both must name the same host in both. */
    public R union(R other) {
        return combine(other, Idset::union, true);
    }

    /** The resources of this R that {@code other} does not hold. */
    public R difference(R other) {
        return combine(other, Idset::difference, false);
    }

    /** The resources both hold. */
    public R intersection(R other) {
        return combine(other, Idset::intersection, false);
    }

    /**
     * Rank by rank and child by child. The result keeps this R's times and scheduling; its nslots is
     * unset (a delta's slot count is not known from R alone); properties and identifiers follow the
     * ranks and instances that remain (the union takes both sides').
     */
    private R combine(R other, BinaryOperator<Idset> op, boolean union) {
        Map<Long, String> hosts = new TreeMap<>(hosts());
        Map<Long, String> otherHosts = other.hosts();
        for (Map.Entry<Long, String> e : otherHosts.entrySet()) {
            String mine = hosts.get(e.getKey());
            if (mine != null && !mine.equals(e.getValue())) {
                throw new IllegalArgumentException("rank " + e.getKey() + " is " + mine + " here but " + e.getValue()
                        + " there");
            }
            if (union) {
                hosts.put(e.getKey(), e.getValue());
            }
        }
        Map<Long, Map<String, Idset>> mine = byRank();
        Map<Long, Map<String, Idset>> theirs = other.byRank();
        Map<Long, Map<String, Idset>> result = new TreeMap<>();
        for (long rank : hosts.keySet()) {
            Map<String, Idset> a = mine.getOrDefault(rank, Map.of());
            Map<String, Idset> b = theirs.getOrDefault(rank, Map.of());
            Map<String, Idset> c = new TreeMap<>();
            for (String name : union ? keys(a, b) : a.keySet()) {
                c.put(name, op.apply(a.getOrDefault(name, Idset.empty()), b.getOrDefault(name, Idset.empty())));
            }
            if (c.values().stream().anyMatch(s -> !s.isEmpty())) {
                result.put(rank, c);
            }
        }
        List<RLite> entries = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (Map.Entry<Long, Map<String, Idset>> e : result.entrySet()) {
            entries.add(new RLite(Idset.of(e.getKey()), e.getValue()));
            names.add(hosts.get(e.getKey()));
        }
        Idset ranks = Idset.of(result.keySet().stream().mapToLong(Long::longValue).toArray());
        Map<String, Idset> props = new HashMap<>();
        for (Map<String, Idset> source : union ? List.of(properties, other.properties) : List.of(properties)) {
            source.forEach((k, v) -> props.merge(k, v.intersection(ranks), Idset::union));
        }
        Map<String, Map<String, Map<Long, String>>> allIds = union ? mergeIds(ids, other.ids) : ids;
        Hostlist nodelist = Hostlist.of(names);
        List<RLite> canonical = canonical(entries);
        return new R(canonical, nodelist, 0, starttime, expiration, props,
                keepHeld(allIds, canonical, nodelist), scheduling);
    }

    private static List<String> keys(Map<String, Idset> a, Map<String, Idset> b) {
        List<String> k = new ArrayList<>(a.keySet());
        b.keySet().stream().filter(n -> !a.containsKey(n)).forEach(k::add);
        return k;
    }

    private static Map<String, Map<String, Map<Long, String>>> mergeIds(Map<String, Map<String, Map<Long, String>>> a,
            Map<String, Map<String, Map<Long, String>>> b) {
        Map<String, Map<String, Map<Long, String>>> out = new TreeMap<>();
        for (Map<String, Map<String, Map<Long, String>>> side : List.of(a, b)) {
            side.forEach((host, maps) -> maps.forEach((map, byIndex) -> byIndex.forEach((index, id) -> {
                String was = out.computeIfAbsent(host, h -> new TreeMap<>()).computeIfAbsent(map, m -> new TreeMap<>())
                        .put(index, id);
                if (was != null && !was.equals(id)) {
                    throw new IllegalArgumentException(host + " " + map + " instance " + index + " is " + was
                            + " here but " + id + " there");
                }
            })));
        }
        return out;
    }

    /** The identifiers of the instances {@code rlite} still holds. */
    private static Map<String, Map<String, Map<Long, String>>> keepHeld(Map<String, Map<String, Map<Long, String>>> ids,
            List<RLite> rlite, Hostlist nodelist) {
        Map<String, Map<String, Idset>> held = held(rlite, nodelist);
        Map<String, Map<String, Map<Long, String>>> out = new TreeMap<>();
        ids.forEach((host, maps) -> maps.forEach((map, byIndex) -> byIndex.forEach((index, id) -> {
            if (held.getOrDefault(host, Map.of()).getOrDefault(map, Idset.empty()).contains(index)) {
                out.computeIfAbsent(host, h -> new TreeMap<>()).computeIfAbsent(map, m -> new TreeMap<>()).put(index, id);
            }
        })));
        return out;
    }

    /** Host -> children of its rank. */
    private static Map<String, Map<String, Idset>> held(List<RLite> rlite, Hostlist nodelist) {
        Map<Long, Map<String, Idset>> byRank = new TreeMap<>();
        for (RLite e : rlite) {
            e.rank().ids().forEach(r -> byRank.put(r, e.children()));
        }
        Map<String, Map<String, Idset>> out = new HashMap<>();
        int i = 0;
        for (Map<String, Idset> children : byRank.values()) {
            out.put(nodelist.get(i++), children);
        }
        return out;
    }

    /** The ids validated against what each host holds, copied into sorted, unmodifiable maps. */
    private static Map<String, Map<String, Map<Long, String>>> copyIds(Map<String, Map<String, Map<Long, String>>> ids,
            List<RLite> rlite, Hostlist nodelist) {
        Map<String, Map<String, Idset>> held = held(rlite, nodelist);
        TreeMap<String, Map<String, Map<Long, String>>> out = new TreeMap<>();
        for (Map.Entry<String, Map<String, Map<Long, String>>> h : ids.entrySet()) {
            Map<String, Idset> children = held.get(h.getKey());
            if (children == null) {
                throw new IllegalArgumentException("identifiers for " + h.getKey() + ", which is not in the nodelist");
            }
            TreeMap<String, Map<Long, String>> maps = new TreeMap<>();
            for (Map.Entry<String, Map<Long, String>> m : h.getValue().entrySet()) {
                Idset indices = children.getOrDefault(m.getKey(), Idset.empty());
                TreeMap<Long, String> byIndex = new TreeMap<>();
                for (Map.Entry<Long, String> i : m.getValue().entrySet()) {
                    if (!indices.contains(i.getKey())) {
                        throw new IllegalArgumentException(h.getKey() + " holds no " + m.getKey() + " instance "
                                + i.getKey());
                    }
                    byIndex.put(i.getKey(), Objects.requireNonNull(i.getValue()));
                }
                if (!byIndex.isEmpty()) {
                    maps.put(m.getKey(), Collections.unmodifiableMap(byIndex));
                }
            }
            if (!maps.isEmpty()) {
                out.put(h.getKey(), Collections.unmodifiableMap(maps));
            }
        }
        return Collections.unmodifiableMap(out);
    }

    private static Idset ranks(List<RLite> rlite) {
        Idset all = Idset.empty();
        for (RLite e : rlite) {
            all = all.union(e.rank());
        }
        return all;
    }

    /** Ranks must be disjoint; entries with equal children are merged; sorted by first rank. */
    private static List<RLite> canonical(List<RLite> rlite) {
        Map<Map<String, Idset>, Idset> byChildren = new LinkedHashMap<>();
        Idset seen = Idset.empty();
        for (RLite e : rlite) {
            if (!seen.intersection(e.rank()).isEmpty()) {
                throw new IllegalArgumentException("rank " + seen.intersection(e.rank()) + " appears twice in R_lite");
            }
            seen = seen.union(e.rank());
            byChildren.merge(e.children(), e.rank(), Idset::union);
        }
        List<RLite> out = new ArrayList<>();
        byChildren.forEach((children, ranks) -> out.add(new RLite(ranks, children)));
        out.sort((x, y) -> Long.compare(x.rank().first(), y.rank().first()));
        return List.copyOf(out);
    }

    /** The canonical JSON tree (RFC 20 keys; {@code scheduling} carries rsmapd's identifiers). */
    public ObjectNode toJson() {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode o = f.objectNode();
        o.put("version", VERSION);
        ObjectNode x = o.putObject("execution");
        ArrayNode entries = x.putArray("R_lite");
        for (RLite e : rlite) {
            ObjectNode entry = entries.addObject();
            entry.put("rank", e.rank().toString());
            ObjectNode children = entry.putObject("children");
            e.children().forEach((k, v) -> children.put(k, v.toString()));
        }
        ArrayNode hosts = x.putArray("nodelist");
        if (!nodelist.isEmpty()) {
            hosts.add(nodelist.toString());
        }
        if (nslots > 0) {
            x.put("nslots", nslots);
        }
        number(x, "starttime", starttime);
        number(x, "expiration", expiration);
        if (!properties.isEmpty()) {
            ObjectNode p = x.putObject("properties");
            properties.forEach((k, v) -> p.put(k, v.toString()));
        }
        if (!ids.isEmpty()) {
            ObjectNode s = o.putObject("scheduling");
            s.put("writer", WRITER);
            ObjectNode byHost = s.putObject("ids");
            ids.forEach((host, maps) -> {
                ObjectNode h = byHost.putObject(host);
                maps.forEach((map, byIndex) -> {
                    ObjectNode m = h.putObject(map);
                    byIndex.forEach((index, id) -> m.put(Long.toString(index), id));
                });
            });
        } else {
            scheduling.ifPresent(s -> o.set("scheduling", s.deepCopy()));
        }
        return o;
    }

    /** Whole seconds as an integer (as Flux writes them), fractions as a double. */
    private static void number(ObjectNode o, String key, double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            o.put(key, (long) v);
        } else {
            o.put(key, v);
        }
    }

    @Override
    public String toString() {
        return toJson().toString();
    }
}
