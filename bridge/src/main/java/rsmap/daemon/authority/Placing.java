// The authority's PLACE: where a job's options can run in the cluster now, from every registered
// host's maps, slots and attributes and what their jobs hold; or only which hosts pass a filter.
package rsmap.daemon.authority;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Grant;
import rsmap.alloc.JobSpec;
import rsmap.daemon.health.HealthView;
import rsmap.daemon.records.JournalFields;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.map.ComplexValues;
import rsmap.node.AttributeTypes;
import rsmap.node.Filter;
import rsmap.node.Filters;
import rsmap.node.Node;
import rsmap.node.NodeAttributes;
import rsmap.node.Verdict;
import rsmap.place.Choice;
import rsmap.place.Option;
import rsmap.place.PlacedJob;
import rsmap.place.Placement;
import rsmap.place.Policy;
import rsmap.request.RequestList;
import rsmap.wire.Code;
import rsmap.wire.Frame;

/**
 * PLACE never grants: it answers. The model is built anew for each PLACE from the hosts' registrations
 * (their complex_values, slots and attributes) and their jobs' grants, plus the authority's own global
 * grants, so that it is exactly what the hosts last told. A filter alone (no request, slots, hosts or
 * alternatives) is evaluated against every registered host: {@code pass} and {@code fail} with the
 * failing attribute, what a submission filter (job_submit.lua, the JSV) needs. With an option or
 * alternatives the core's {@link Placement} chooses (docs/alternatives.md), over the hosts in name order.
 * Only {@link #snapshot} runs under the daemon's lock (a copy of the registrations and the global jobs);
 * the model is built and the choice made outside it ({@link PlaceLane}), so PLACE never holds up a grant.
 */
final class Placing {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final Set<String> KEYS = Set.of("job", "request", "hosts", "candidates", "slots", "filter", "group",
            "group_values", "whole_hosts", "label", "alternatives", "reserve", "runtime");
    private static final Set<String> OPTION_KEYS = Set.of("request", "hosts", "candidates", "slots", "filter",
            "group", "group_values", "whole_hosts", "label");
    /** PBS's alternatives design: "the usual number is less than 10"; the core takes up to 64. */
    static final int MAX_ALTERNATIVES = 64;

    private final HostState s;
    private final ClusterView view;
    private final LogBook log;
    /** complex_values parsed outside the lock, by text; the few of late (hosts share a handful of texts). */
    private final Map<String, ComplexValues> parsed = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * What PLACE reads, copied under the daemon's lock: the registered hosts in name order (each a copy of
     * its view: later events change the view, never this), the global maps and the authority's jobs.
     */
    record Snapshot(Map<String, ClusterView.HostView> hosts, ComplexValues global, List<Job> jobs) {
    }

    /** The model and the nodes PLACE chooses over, built from a {@link Snapshot} at {@code at} (nanoTime). */
    record Built(long at, Cluster model, Map<String, Node> nodes) {
    }

    /** Builds what PLACE chooses over from {@code in}: outside the daemon's lock, the costly part. */
    Built build(Snapshot in) {
        return new Built(System.nanoTime(), model(in), nodes(s.config.attributeTypes(), in));
    }

    /** The copy PLACE works on; under the daemon's lock, O(hosts + jobs) reference copies. */
    Snapshot snapshot() {
        Map<String, ClusterView.HostView> hosts = new java.util.TreeMap<>();
        view.hosts().forEach((name, v) -> hosts.put(name, v.copy()));
        return new Snapshot(hosts, s.cluster().hosts().get(Cluster.GLOBAL), List.copyOf(s.jobs()));
    }

    Placing(HostState s, ClusterView view, LogBook log) {
        this.s = s;
        this.view = view;
        this.log = log;
    }

    /** PLACE JSON: STATE with the verdicts and/or the choice, then OK; reads {@code in} only, never changes it. */
    List<Frame> place(Frame c, Built in) throws Refusal {
        Args a = Args.of(Code.PLACE.name(), c, KEYS);
        AttributeTypes types = s.config.attributeTypes();
        Map<String, Node> nodes = in.nodes();
        Optional<Filter> admin = s.config.filter(); // the admin limit (rsmapd.conf filter) every job passes
        ObjectNode answer = JSON.createObjectNode();
        boolean placing = a.has("request") || a.has("slots") || a.has("hosts") || a.has("alternatives")
                || a.has("candidates");
        if (a.has("filter")) {
            Filter job = filter(a.node().get("filter"), "filter", types);
            answer.put("filter", job.toString());
            ArrayNode pass = answer.putArray("pass");
            ArrayNode fail = answer.putArray("fail");
            for (Verdict v : Filters.combine(admin, Optional.of(job)).evaluate(nodes.values())) {
                if (v.passed()) {
                    pass.add(v.host());
                } else {
                    Verdict.Failure f = v.failure().orElseThrow();
                    fail.addObject().put("host", v.host()).put("attribute", f.attribute()).put("source", f.source())
                            .put("why", f.why());
                }
            }
        } else if (!placing) {
            throw Refusal.malformed("PLACE needs a filter, or an option (request, slots or hosts), or "
                    + "alternatives");
        }
        if (!placing) {
            return List.of(Frame.of(c.tid(), Code.STATE.value(), answer.toString()));
        }
        Cluster model = in.model();
        List<Option> options = new ArrayList<>();
        boolean alternatives = a.has("alternatives");
        if (alternatives) {
            JsonNode list = a.node().get("alternatives");
            if (!list.isArray() || list.size() < 1 || list.size() > MAX_ALTERNATIVES) {
                throw Refusal.malformed("PLACE: \"alternatives\" is a list of 1 to " + MAX_ALTERNATIVES
                        + " options");
            }
            for (int i = 0; i < list.size(); i++) {
                options.add(option(list.get(i), "alternative " + i + ": ", model, types));
            }
        } else {
            options.add(option(a.node(), "", model, types));
        }
        long runtime = a.integer("runtime", 0, 0, Integer.MAX_VALUE);
        PlacedJob job = new PlacedJob(a.string("job", "place"), options, alternatives,
                runtime == 0 ? JobSpec.UNLIMITED : runtime, a.node().path("reserve").asBoolean(false));
        Choice choice = Placement.choose(new rsmap.place.ClusterView(model, nodes, admin), job,
                s.config.alternativesPolicy());
        answer.put("decision", choice.kind().name().toLowerCase(java.util.Locale.ROOT));
        if (choice instanceof Choice.Start st) {
            hosts(answer, st.hosts());
            alternative(answer, alternatives, st.alternative());
        } else if (choice instanceof Choice.Planned pl) {
            answer.put("start", pl.start());
            hosts(answer, pl.hosts());
            alternative(answer, alternatives, pl.alternative());
        }
        answer.put("why", choice.why());
        return List.of(Frame.of(c.tid(), Code.STATE.value(), answer.toString()));
    }

    private static void hosts(ObjectNode answer, Map<String, Integer> hosts) {
        ObjectNode h = answer.putObject("hosts");
        hosts.forEach(h::put);
    }

    private static void alternative(ObjectNode answer, boolean alternatives, int i) {
        if (alternatives) {
            answer.put("alternative", i);
        }
    }

    /** Every registered host as a node: its slots and attributes (as the host typed them, re-read here). */
    private Map<String, Node> nodes(AttributeTypes types, Snapshot in) {
        Map<String, Node> out = new LinkedHashMap<>();
        in.hosts().forEach((name, h) -> out.put(name, ClusterView.node(name, h, types, s.limits).orElseGet(() -> {
            // No attributes told, or ones the declared types do not read: only "host" is known of it.
            OptionalInt slots = h.slots != null && h.slots.isIntegralNumber() ? OptionalInt.of(h.slots.asInt())
                    : OptionalInt.empty();
            return new Node(name, slots, NodeAttributes.NONE);
        })));
        return out;
    }

    /**
     * The cluster as the hosts last told it: each registered host's maps, slots and running jobs' grants,
     * and the global maps with the authority's own grants. A host whose registration cannot be read again
     * is in it without maps, and that is logged.
     */
    private Cluster model(Snapshot in) {
        Cluster m = new Cluster(s.table);
        m.configure(Cluster.GLOBAL, in.global(), 0);
        Map<String, Grant> held = new LinkedHashMap<>();
        Map<String, Map<String, Integer>> where = new LinkedHashMap<>();
        in.hosts().forEach((name, h) -> {
            try {
                m.configure(name, values(h.complexValues.isEmpty() ? "NONE" : h.complexValues), 0);
            } catch (ParseException e) {
                log.note(Log.Level.WARNING, "host " + name + ": its complex_values do not read here: " + e.getMessage());
                return;
            }
            if (h.slots != null && h.slots.isIntegralNumber()) {
                m.setSlots(name, OptionalInt.of(h.slots.asInt()), 0);
            }
            HealthView.taint(m, name, h.maps); // a tainted instance is not free to PLACE either
            for (JsonNode j : h.jobs.values()) {
                String id = JobId.parse(j.path("job").asText()).map(x -> x.onHost(name).toString())
                        .orElse(name + ":" + j.path("job").asText()); // as the host said it: held by that name
                try {
                    held.merge(id, JournalFields.grant(j.path("grants")), Grant::plus);
                } catch (java.io.IOException e) {
                    log.note(Log.Level.WARNING, "host " + name + ": job " + j.path("job").asText() + "'s grant does "
                            + "not read: " + e.getMessage());
                    continue;
                }
                where.put(id, Map.of(name, Math.max(1, j.path("slots").asInt(1))));
            }
        });
        for (Job j : in.jobs()) { // HOST:JOB holding global instances
            held.merge(j.id().toString(), j.grant(), Grant::plus); // as the core names it
            where.putIfAbsent(j.id().toString(), Map.of(s.hostOf(j.id()), j.slots()));
        }
        held.forEach((id, grant) -> {
            Map<String, Integer> hosts = where.get(id);
            String host = hosts.keySet().iterator().next();
            if (!m.knows(host)) {
                return; // a global grant of a host that never registered: nothing of it to place around
            }
            JobSpec spec = new JobSpec(id, new RequestList(List.of()), hosts, host, JobSpec.UNLIMITED, Optional.empty(),
                    false);
            m.restore(spec, grant, 0);
        });
        return m;
    }

    /** A host's complex_values, parsed once per text (thread-safe: PLACE runs outside the lock). */
    private ComplexValues values(String text) throws ParseException {
        ComplexValues v = parsed.get(text);
        if (v == null) {
            v = ComplexValues.parse(text, s.table, s.limits);
            if (parsed.size() >= 64) {
                parsed.clear(); // registrations come and go: keep the few of late
            }
            parsed.put(text, v);
        }
        return v;
    }

    private Option option(JsonNode n, String where, Cluster model, AttributeTypes types)
            throws Refusal {
        if (!n.isObject()) {
            throw Refusal.malformed("PLACE: " + where + "an option is an object with request, hosts or "
                    + "slots, candidates, filter, group, group_values, whole_hosts, label");
        }
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!OPTION_KEYS.contains(k) && (!where.isEmpty() || !KEYS.contains(k))) {
                throw Refusal.malformed("PLACE: " + where + "unknown key " + Args.quote(k));
            }
        }
        RequestList request;
        try {
            request = n.has("request") ? RequestList.parse(text(n, "request", where), s.table, s.limits)
                    : new RequestList(List.of());
        } catch (ParseException e) {
            throw Refusal.refused("request: " + where + e.getMessage());
        }
        Map<String, Integer> hosts = new LinkedHashMap<>();
        if (n.has("hosts")) {
            if (!n.get("hosts").isObject()) {
                throw Refusal.malformed("PLACE: " + where + "\"hosts\" is an object of host to slots");
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = n.get("hosts").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                hosts.put(e.getKey(), count(e.getValue(), where + "hosts." + e.getKey()));
            }
        }
        List<String> candidates = strings(n, "candidates", where);
        for (String h : candidates) {
            if (!model.knows(h) || h.equals(Cluster.GLOBAL)) {
                throw Refusal.refused("PLACE: " + where + "no registered host " + Args.quote(h));
            }
        }
        Optional<Filter> filter = n.has("filter") && !where.isEmpty()
                ? Optional.of(filter(n.get("filter"), where + "filter", types)) : Optional.empty();
        if (where.isEmpty() && n.has("filter")) {
            filter = Optional.of(filter(n.get("filter"), "filter", types));
        }
        try {
            return new Option(n.has("label") ? text(n, "label", where) : "", request, hosts, candidates,
                    n.has("slots") ? count(n.get("slots"), where + "slots") : 0, filter,
                    n.has("group") ? Optional.of(text(n, "group", where)) : Optional.empty(),
                    strings(n, "group_values", where), n.path("whole_hosts").asBoolean(false));
        } catch (IllegalArgumentException e) {
            throw Refusal.refused("PLACE: " + where + e.getMessage());
        }
    }

    private Filter filter(JsonNode n, String where, AttributeTypes types) throws Refusal {
        if (!n.isTextual()) {
            throw Refusal.malformed("PLACE: " + where + " is a string (the filter language)");
        }
        try {
            return Filter.parse(n.asText(), types, s.limits);
        } catch (ParseException e) {
            throw Refusal.refused(where + ": " + e.getMessage());
        }
    }

    private static String text(JsonNode n, String key, String where) throws Refusal {
        if (!n.get(key).isTextual()) {
            throw Refusal.malformed("PLACE: " + where + Args.quote(key) + " is a string");
        }
        return n.get(key).asText();
    }

    private static int count(JsonNode n, String what) throws Refusal {
        if (!n.isIntegralNumber() || !n.canConvertToInt() || n.asInt() < 1) {
            throw Refusal.malformed("PLACE: " + what + " is a whole number, 1 or more");
        }
        return n.asInt();
    }

    private static List<String> strings(JsonNode n, String key, String where) throws Refusal {
        if (!n.has(key)) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        if (!n.get(key).isArray()) {
            throw Refusal.malformed("PLACE: " + where + Args.quote(key) + " is a list of strings");
        }
        for (JsonNode x : n.get(key)) {
            if (!x.isTextual()) {
                throw Refusal.malformed("PLACE: " + where + Args.quote(key) + " is a list of strings");
            }
            out.add(x.asText());
        }
        return out;
    }
}
