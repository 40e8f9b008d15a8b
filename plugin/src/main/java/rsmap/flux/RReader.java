// The RFC 20 rules for R version 1, checked on the JSON tree; each refusal names its place.
package rsmap.flux;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import rsmap.Limits;
import rsmap.ParseException;

/** Reads an {@link R} from a tree, or refuses it with a {@link Where.Invalid}. */
final class RReader {
    /** RFC 20: property names MUST NOT contain these. */
    private static final String ILLEGAL_IN_PROPERTY = "!&'\"^`|()";

    private RReader() {
    }

    static R read(JsonNode tree, Limits limits) throws Where.Invalid {
        Where root = Where.ROOT;
        ObjectNode o = root.object(tree);
        Where v = root.key("version");
        int version = v.integer(root.required(o, "version"));
        if (version != R.VERSION) {
            throw v.invalid("R version " + version + " is not supported (only version 1, RFC 20)");
        }
        root.onlyKeys(o, Set.of("version", "execution", "scheduling"));
        Where x = root.key("execution");
        ObjectNode execution = x.object(root.required(o, "execution"));
        x.onlyKeys(execution, Set.of("R_lite", "nodelist", "nslots", "starttime", "expiration", "properties"));
        List<RLite> rlite = rlite(x.key("R_lite"), x.required(execution, "R_lite"));
        Hostlist nodelist = nodelist(x.key("nodelist"), x.required(execution, "nodelist"), limits);
        Idset ranks = Idset.empty();
        for (int i = 0; i < rlite.size(); i++) {
            Idset twice = ranks.intersection(rlite.get(i).rank());
            if (!twice.isEmpty()) {
                throw x.key("R_lite").index(i).key("rank").invalid("rank " + twice + " appears in another entry too");
            }
            ranks = ranks.union(rlite.get(i).rank());
        }
        if (ranks.size() != nodelist.size()) {
            throw x.key("nodelist").invalid(nodelist.size() + " hosts for " + ranks.size()
                    + " ranks (RFC 20: the hosts map one to one onto the sorted ranks)");
        }
        long nslots = 0;
        if (execution.has("nslots")) {
            Where n = x.key("nslots");
            nslots = n.integer(execution.get("nslots"));
            if (nslots < 1) {
                throw n.invalid("nslots must be above 0 when present (RFC 20)");
            }
        }
        double start = time(x, execution, "starttime");
        double end = time(x, execution, "expiration");
        if (start > 0 && end > 0 && end <= start) {
            throw x.key("expiration").invalid("expiration must be after starttime (RFC 20)");
        }
        Map<String, Idset> properties = properties(x.key("properties"), execution, ranks);
        Map<String, Map<String, Map<Long, String>>> ids = Map.of();
        Optional<ObjectNode> scheduling = Optional.empty();
        if (o.has("scheduling")) {
            Where s = root.key("scheduling");
            ObjectNode sched = s.object(o.get("scheduling"));
            JsonNode writer = sched.get("writer");
            if (writer != null && R.WRITER.equals(s.key("writer").string(writer))) {
                ids = ids(s, sched, rlite, nodelist);
            } else {
                scheduling = Optional.of(sched); // another scheduler's: kept, not read (RFC 20)
            }
        }
        try {
            return new R(rlite, nodelist, nslots, start, end, properties, ids, scheduling);
        } catch (IllegalArgumentException e) {
            throw root.invalid(e.getMessage()); // every rule is checked above; this is the backstop
        }
    }

    private static List<RLite> rlite(Where w, JsonNode n) throws Where.Invalid {
        w.array(n);
        List<RLite> out = new ArrayList<>();
        for (int i = 0; i < n.size(); i++) {
            Where e = w.index(i);
            ObjectNode entry = e.object(n.get(i));
            e.onlyKeys(entry, Set.of("rank", "children"));
            Idset rank = idset(e.key("rank"), e.required(entry, "rank"));
            if (rank.isEmpty()) {
                throw e.key("rank").invalid("an entry names at least one rank");
            }
            Where c = e.key("children");
            ObjectNode children = c.object(e.required(entry, "children"));
            c.required(children, "core"); // RFC 20: core is REQUIRED (rsmapd writes "" for none)
            Map<String, Idset> sets = new TreeMap<>();
            Iterator<Map.Entry<String, JsonNode>> fields = children.fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> f = fields.next();
                if (f.getKey().length() > 256 || !JobspecReader.MAP_NAME.matcher(f.getKey()).matches()) {
                    throw c.key(f.getKey()).invalid("not a resource name");
                }
                sets.put(f.getKey(), idset(c.key(f.getKey()), f.getValue()));
            }
            out.add(new RLite(rank, sets));
        }
        return out;
    }

    private static Idset idset(Where w, JsonNode n) throws Where.Invalid {
        String text = w.string(n);
        try {
            return Idset.parse(text);
        } catch (ParseException e) {
            throw w.invalid("not an idset (RFC 22): " + e.getMessage() + " of '" + clip(text) + "'");
        }
    }

    /** An array of hostnames or RFC 29 hostlists, concatenated, bounded as one hostlist. */
    private static Hostlist nodelist(Where w, JsonNode n, Limits limits) throws Where.Invalid {
        w.array(n);
        Hostlist all = Hostlist.empty();
        for (int i = 0; i < n.size(); i++) {
            Where e = w.index(i);
            String text = e.string(n.get(i));
            try {
                Hostlist part = Hostlist.parse(text, limits);
                if (part.isEmpty()) {
                    throw e.invalid("an empty hostlist");
                }
                if ((long) all.size() + part.size() > limits.maxInstances()) {
                    throw e.invalid("more than " + limits.maxInstances() + " hosts");
                }
                all = all.concat(part);
            } catch (ParseException x) {
                throw e.invalid("not a hostlist (RFC 29): " + x.getMessage() + " of '" + clip(text) + "'");
            }
        }
        return all;
    }

    private static double time(Where x, ObjectNode execution, String key) throws Where.Invalid {
        if (!execution.has(key)) {
            return 0; // optional; 0 means unset (RFC 20)
        }
        double t = x.key(key).number(execution.get(key));
        if (t < 0) {
            throw x.key(key).invalid("seconds since the epoch must not be negative");
        }
        return t;
    }

    private static Map<String, Idset> properties(Where w, ObjectNode execution, Idset ranks) throws Where.Invalid {
        Map<String, Idset> out = new HashMap<>();
        if (!execution.has("properties")) {
            return out;
        }
        ObjectNode p = w.object(execution.get("properties"));
        Iterator<Map.Entry<String, JsonNode>> fields = p.fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> f = fields.next();
            Where k = w.key(f.getKey());
            if (f.getKey().isEmpty() || f.getKey().chars().anyMatch(c -> ILLEGAL_IN_PROPERTY.indexOf(c) >= 0)) {
                throw k.invalid("a property name must not be empty nor contain any of " + ILLEGAL_IN_PROPERTY
                        + " (RFC 20)");
            }
            Idset set = idset(k, f.getValue());
            if (!ranks.containsAll(set)) {
                throw k.invalid("ranks " + set.difference(ranks) + " are not in R_lite");
            }
            out.put(f.getKey(), set);
        }
        return out;
    }

    /** {@code scheduling: {"writer":"rsmapd","ids":{host:{map:{index:identifier}}}}}. */
    private static Map<String, Map<String, Map<Long, String>>> ids(Where s, ObjectNode sched, List<RLite> rlite,
            Hostlist nodelist) throws Where.Invalid {
        s.onlyKeys(sched, Set.of("writer", "ids"));
        Where w = s.key("ids");
        ObjectNode byHost = w.object(s.required(sched, "ids"));
        Map<String, Map<String, Idset>> held = held(rlite, nodelist);
        Map<String, Map<String, Map<Long, String>>> out = new TreeMap<>();
        Iterator<Map.Entry<String, JsonNode>> hosts = byHost.fields();
        while (hosts.hasNext()) {
            Map.Entry<String, JsonNode> h = hosts.next();
            Where hw = w.key(h.getKey());
            Map<String, Idset> children = held.get(h.getKey());
            if (children == null) {
                throw hw.invalid("not a host of the nodelist");
            }
            Iterator<Map.Entry<String, JsonNode>> maps = hw.object(h.getValue()).fields();
            while (maps.hasNext()) {
                Map.Entry<String, JsonNode> m = maps.next();
                Where mw = hw.key(m.getKey());
                Idset indices = children.getOrDefault(m.getKey(), Idset.empty());
                Iterator<Map.Entry<String, JsonNode>> byIndex = mw.object(m.getValue()).fields();
                while (byIndex.hasNext()) {
                    Map.Entry<String, JsonNode> i = byIndex.next();
                    Where iw = mw.key(i.getKey());
                    long index = index(iw, i.getKey());
                    if (!indices.contains(index)) {
                        throw iw.invalid(h.getKey() + " holds no " + m.getKey() + " instance " + index);
                    }
                    out.computeIfAbsent(h.getKey(), k -> new TreeMap<>()).computeIfAbsent(m.getKey(),
                            k -> new TreeMap<>()).put(index, iw.string(i.getValue()));
                }
            }
        }
        return out;
    }

    private static long index(Where w, String key) throws Where.Invalid {
        try {
            Idset one = Idset.parse(key);
            if (one.size() == 1 && one.toString().equals(key)) {
                return one.first();
            }
        } catch (ParseException e) {
            // refused below
        }
        throw w.invalid("an instance index is one decimal id, not '" + clip(key) + "'");
    }

    private static Map<String, Map<String, Idset>> held(List<RLite> rlite, Hostlist nodelist) {
        TreeMap<Long, Map<String, Idset>> byRank = new TreeMap<>();
        for (RLite e : rlite) {
            e.rank().ids().forEach(r -> byRank.put(r, e.children()));
        }
        Map<String, Map<String, Idset>> out = new HashMap<>();
        int i = 0;
        for (Map<String, Idset> children : byRank.values()) {
            if (i < nodelist.size()) {
                out.put(nodelist.get(i++), children);
            }
        }
        return out;
    }

    private static String clip(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }
}
