// The simulate ops of placement and alternatives: placed submits, alternatives, the policy op.
package rsmap.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Decision;
import rsmap.alloc.JobSpec;
import rsmap.node.Filter;
import rsmap.place.Alternatives;
import rsmap.place.Choice;
import rsmap.place.ClusterView;
import rsmap.place.Option;
import rsmap.place.PlacedJob;
import rsmap.place.Policy;
import rsmap.request.RequestList;

/**
 * A submit with {@code slots} (and {@code candidates}, {@code filter}, {@code group},
 * {@code group_values}, {@code whole_hosts}) or with {@code alternatives} goes through
 * {@link rsmap.place.Placement}; its answer and start line add {@code hosts}, {@code alternative} (with
 * alternatives) and {@code why}. docs/alternatives.md has the contract.
 */
final class PlaceOps {
    /** The fields of one option, at the top of a placed submit or in each element of alternatives. */
    static final Set<String> OPTION_FIELDS = Set.of("request", "hosts", "candidates", "slots", "filter", "group",
            "group_values", "whole_hosts", "label");
    /** At most this many alternatives: PBS's alternatives design, "the usual number is less than 10". */
    static final int MAX_ALTERNATIVES = 64;

    private final Cluster cluster;
    private final NodeOps nodeOps;
    private final Lines lines;
    private final Limits limits;
    private Policy policy = Policy.USER;
    /** The choosing jobs by id, for their answers and start lines; dropped when they end. */
    private final Map<String, Alternatives> jobs = new HashMap<>();

    PlaceOps(Cluster cluster, NodeOps nodeOps, Lines lines, Limits limits) {
        this.cluster = cluster;
        this.nodeOps = nodeOps;
        this.lines = lines;
        this.limits = limits;
    }

    static boolean isPlaced(JsonNode n) {
        return n.has("alternatives") || n.has("slots") || n.has("candidates");
    }

    /** {@code {"op":"policy","alternatives":"user"|"fewest"|"ranking","ranking":[labels]}}. */
    List<String> policy(JsonNode n) throws Malformed {
        String kind = Fields.text(n, "alternatives", true);
        List<String> ranking = strings(n, "ranking");
        ObjectNode o = lines.json().createObjectNode();
        o.put("op", "policy");
        try {
            policy = Policy.of(kind, ranking);
            o.put("ok", true);
        } catch (IllegalArgumentException e) {
            o.put("ok", false);
            o.put("error", e.getMessage());
        }
        return List.of(lines.write(o));
    }

    /** The job of a placed submit, with its options; refused (ParseException) when a filter or request is bad. */
    Alternatives read(JsonNode n, String id, long runtime, boolean reserve) throws Malformed, ParseException {
        if (n.has("ar")) {
            throw new Malformed("'ar' does not go with placement or alternatives");
        }
        List<Option> options = new ArrayList<>();
        boolean alternatives = n.has("alternatives");
        if (alternatives) {
            for (String f : OPTION_FIELDS) {
                if (n.has(f)) {
                    throw new Malformed("'" + f + "' goes inside each of 'alternatives', not beside them");
                }
            }
            JsonNode a = n.get("alternatives");
            if (!a.isArray() || a.size() == 0 || a.size() > MAX_ALTERNATIVES) {
                throw new Malformed("'alternatives' must be an array of 1 to " + MAX_ALTERNATIVES + " options");
            }
            for (int i = 0; i < a.size(); i++) {
                try {
                    options.add(option(a.get(i)));
                } catch (ParseException e) {
                    throw new ParseException("alternative " + i + ": " + e.problem(), e.input(), e.offset());
                } catch (Malformed e) {
                    throw new Malformed("alternative " + i + ": " + e.getMessage());
                }
            }
        } else {
            options.add(option(n));
        }
        return new Alternatives(new PlacedJob(id, options, alternatives, runtime, reserve), policy, this::view);
    }

    private ClusterView view(Cluster c) {
        return new ClusterView(c, nodeOps.byName(), Optional.empty());
    }

    private Option option(JsonNode n) throws Malformed, ParseException {
        if (!n.isObject()) {
            throw new Malformed("an option is an object with the fields of a submit");
        }
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!OPTION_FIELDS.contains(f) && !Set.of("op", "job", "time", "runtime", "reserve").contains(f)) {
                throw new Malformed("unknown field '" + f + "' for an option");
            }
        }
        String request = Fields.text(n, "request", false);
        RequestList parsed = request == null ? new RequestList(List.of())
                : RequestList.parse(request, cluster.table(), limits);
        Map<String, Integer> hosts = n.has("hosts") ? Fields.hosts(n) : Map.of();
        int slots = 0;
        if (n.has("slots")) {
            JsonNode s = n.get("slots");
            if (!s.isIntegralNumber() || !s.canConvertToInt() || s.asInt() < 1) {
                throw new Malformed("'slots' must be a whole number, 1 or more");
            }
            slots = s.asInt();
        }
        List<String> candidates = strings(n, "candidates");
        for (String c : candidates) {
            if (!cluster.hosts().containsKey(c) || c.equals(Cluster.GLOBAL)) {
                throw new ParseException("unknown candidate host " + c, c, 0);
            }
        }
        String filter = Fields.text(n, "filter", false);
        Optional<Filter> f = filter == null ? Optional.empty() : Optional.of(nodeOps.parse(filter));
        Optional<String> group = Optional.ofNullable(Fields.text(n, "group", false));
        String label = Fields.text(n, "label", false);
        try {
            return new Option(label == null ? "" : label, parsed, hosts, candidates, slots, f, group,
                    strings(n, "group_values"), Fields.bool(n, "whole_hosts"));
        } catch (IllegalArgumentException e) {
            throw new Malformed(e.getMessage());
        }
    }

    private static List<String> strings(JsonNode n, String field) throws Malformed {
        JsonNode v = n.get(field);
        if (v == null) {
            return List.of();
        }
        if (!v.isArray()) {
            throw new Malformed("'" + field + "' must be an array of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode x : v) {
            if (!x.isTextual() || x.asText().isEmpty()) {
                throw new Malformed("'" + field + "' must be an array of non-empty strings");
            }
            out.add(x.asText());
        }
        return out;
    }

    /** Submits a read job: the decision, the job remembered for its start line. */
    Decision submit(Alternatives job, long time) {
        PlacedJob j = job.job();
        Decision d = cluster.submit(j.id(), job, j.runtime(), j.reserve(), time);
        if (!d.isRefused()) {
            jobs.put(j.id(), job);
        }
        return d;
    }

    /** What a submit answer or start line adds: hosts, alternative, why. */
    void describe(String id, ObjectNode o) {
        Alternatives a = jobs.get(id);
        if (a == null) {
            return;
        }
        Choice c = a.last();
        if (cluster.isRunning(id)) {
            ObjectNode h = o.putObject("hosts");
            cluster.specOf(id).map(JobSpec::hosts).orElse(Map.of()).forEach(h::put);
        } else if (c.kind() == Choice.Kind.PLANNED && cluster.plannedStart(id).isPresent()) {
            ObjectNode h = o.putObject("planned_hosts");
            ((Choice.Planned) c).hosts().forEach(h::put);
        }
        int alternative = c.kind() == Choice.Kind.START ? ((Choice.Start) c).alternative()
                : c.kind() == Choice.Kind.PLANNED ? ((Choice.Planned) c).alternative() : -1;
        if (a.job().alternatives() && alternative >= 0) {
            o.put("alternative", alternative);
        }
        o.put("why", c.why());
    }

    /** A job ended: it is forgotten. */
    void finished(String id) {
        if (!cluster.isRunning(id) && !cluster.isWaiting(id)) {
            jobs.remove(id);
        }
    }
}
