// What rsmapd shows of its state: the STATE of QUERY and START_EVENTS, the job objects of JOB_START and
// the diffs, and the self-describing attributes of MODEL_DEF.
package rsmap.daemon.job;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import rsmap.alloc.Cluster;
import rsmap.alloc.Exclusions;
import rsmap.complex.Value;
import rsmap.complex.ValueType;
import rsmap.daemon.records.JsonText;
import rsmap.daemon.state.Access;
import rsmap.daemon.state.GrantJson;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.map.Instance;
import rsmap.map.ResourceMap;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.daemon.state.JobId;

/** JSON views of a daemon's {@link HostState}; called under the daemon's lock. */
public final class Views {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** What a job owner sees in place of another user's job holding an instance. */
    public static final String OTHER = "*";

    private Views() {
    }

    /** {job, user, request, slots, grants, env}: one job as JOB_START, JOB_ENTER and the diffs show it. */
    public static ObjectNode job(Job j) {
        ObjectNode n = JSON.createObjectNode().put("job", j.id().toString()).put("user", j.user()).put("request", j.request())
                .put("slots", j.slots());
        n.set("grants", GrantJson.of(j.grant()));
        if (!j.releasing().isEmpty()) {
            n.set("releasing", GrantJson.of(j.releasing())); // taken away by a realloc, not released yet
        }
        ObjectNode env = n.putObject("env");
        j.env().forEach(env::put);
        return n;
    }

    /** {@link #job}'s text, written straight (the answer of every job start; {@code JsonTextTest}). */
    public static String jobText(Job j) {
        JsonText t = new JsonText().put("job", j.id().toString()).put("user", j.user()).put("request", j.request())
                .put("slots", j.slots()).put("grants", j.grant());
        if (!j.releasing().isEmpty()) {
            t.put("releasing", j.releasing());
        }
        return t.put("env", j.env()).text();
    }

    /**
     * The whole state a peer may see: host, configuration generation, maps with their instances and
     * holders, jobs, reservations (none: the scheduler keeps those). A job owner sees its own jobs; other
     * holders show as {@value #OTHER}. {@code onlyJob} narrows the jobs to one.
     */
    public static ObjectNode state(HostState d, Access access, Session.Peer peer, EventHub.Filters filters, JobId onlyJob) {
        ObjectNode q = JSON.createObjectNode().put("host", d.host()).put("generation", d.generation());
        hostAttributes(d, q);
        for (JsonNode slice : q.path("mig")) { // another user's slice shows its job as the maps show its holder
            String job = slice.path("job").asText();
            Job j = JobId.parse(job).flatMap(d::job).orElse(null); // as mig.json names it
            // A slice left by an ended job (its destroy failed; reconciliation tries again) is nobody's to see.
            if (!job.isEmpty() && (j == null ? !access.privileged(peer) : !access.mayQuery(peer, j))) {
                ((ObjectNode) slice).put("job", OTHER);
            }
        }
        q.set("maps", maps(d, access, peer, filters));
        ArrayNode jobs = q.putArray("jobs");
        for (Job j : d.jobs()) {
            if ((onlyJob == null || onlyJob.equals(j.id())) && access.mayQuery(peer, j)
                    && filters.passJob(j.id(), j.user(), j.maps())) {
                jobs.add(job(j));
            }
        }
        q.putArray("reservations");
        if (!d.leftovers().isEmpty() && access.privileged(peer)) {
            ObjectNode left = q.putObject("leftovers"); // ended jobs' processes, under a closed policy
            d.leftovers().forEach((job, pids) -> pids.forEach(left.putArray(job)::add));
        }
        return q;
    }

    /**
     * the host's attributes as written ({@code "attributes":{"arch":"x86_64",...}}) and its slot
     * capacity ({@code "slots":64}); each left out when there is none, so that a host without attributes
     * answers as before. REGISTER carries them to the authority's cluster view.
     */
    static void hostAttributes(HostState d, ObjectNode q) {
        if (!d.attributes().values().isEmpty()) {
            ObjectNode a = q.putObject("attributes");
            d.attributes().text().forEach(a::put);
        }
        if (d.slots().isPresent()) {
            q.put("slots", d.slots().getAsInt());
        }
        ObjectNode nvidia = d.devices.facts(); // docs/gpus.md: the driver and each card, where NVML was read
        if (nvidia != null) {
            q.set("nvidia", nvidia);
        }
        if (d.devices.migMap().isPresent()) {
            q.set("mig", d.devices.slicesShown()); // docs/gpus.md: each slice with its profile, card and MIG UUID
        }
    }

    /**
     * Per map: amount, the instances with holder ("" free) and, for each identifier, its characteristics and
     * health; one free and untainted that an exclusion keeps out of use also its {@code blocked} ({@link #blocked}).
     * {@code peer} null: no holders at all (configuration events go to everyone).
     */
    static ObjectNode maps(HostState d, Access access, Session.Peer peer, EventHub.Filters filters) {
        ObjectNode maps = JSON.createObjectNode();
        Cluster c = d.cluster();
        Map<String, List<Map.Entry<String, String>>> held = c.instances(d.host());
        for (Map.Entry<String, List<Map.Entry<String, String>>> e : held.entrySet()) {
            if (!filters.passMap(e.getKey())) {
                continue;
            }
            ResourceMap rm = c.hosts().get(d.host()).resourceMap(e.getKey()).orElseThrow();
            ObjectNode m = maps.putObject(e.getKey()).put("amount", rm.amount());
            ArrayNode instances = m.putArray("instances");
            Map<String, Exclusions.Block> blocked = peer == null ? Map.of() : c.blocked(d.host(), e.getKey());
            for (int i = 0; i < e.getValue().size(); i++) {
                Instance inst = rm.instances().get(i);
                ObjectNode o = instances.addObject().put("id", inst.id());
                String holder = e.getValue().get(i).getValue();
                if (peer != null) {
                    o.put("holder", shown(d, access, peer, holder));
                }
                inst.characteristics().asMap().forEach((k, v) -> o.put(k, v.text()));
                o.set("health", d.health.json(e.getKey(), inst.id())); // docs/health.md
                Exclusions.Block b = holder.isEmpty() ? blocked.get(inst.id()) : null;
                if (b != null) {
                    o.set("blocked", blocked(b, d, access, peer));
                }
            }
        }
        return maps;
    }

    /** Job {@code job} as {@code peer} may see it holding something: itself, or {@value #OTHER} ("" stays ""). */
    private static String shown(HostState d, Access access, Session.Peer peer, String job) {
        Job j = JobId.parse(job).flatMap(d::job).orElse(null); // as the core names it
        return job.isEmpty() || j == null || access.mayQuery(peer, j) ? job : OTHER;
    }

    /**
     * Why a free instance is out of use through an exclusion (docs/gpus.md, "One card, one pool"; docs/protocol.md,
     * QUERY): {@code {"map":"mig","id":"0:1g.10gb@6","job":"7"}} (a partner held, the job shown as holders are),
     * {@code {"map":"gpu","id":"0","tainted":"mig: ... at 12:03:05"}} (a partner tainted), or
     * {@code {"reason":"occupied by slice gi 13 (1g.10gb) that rsmapd did not create"}} (blocked outright).
     */
    static ObjectNode blocked(Exclusions.Block b, HostState d, Access access, Session.Peer peer) {
        ObjectNode o = JSON.createObjectNode();
        if (b.by() == null) {
            return o.put("reason", b.reason());
        }
        o.put("map", b.by().map()).put("id", b.by().id());
        return b.job() != null ? o.put("job", shown(d, access, peer, b.job())) : o.put("tainted", b.taint());
    }

    /**
     * the PTP proxy protocol, "Attributes": self-describing metadata of the data rsmapd sends, one ATTR_DEF event each:
     * {@code id} (unique, numbered in this order), {@code name} (stable across runs), {@code type},
     * {@code short} and {@code long} name, {@code min}, {@code max}, {@code default} (null where none),
     * {@code values} (the allowed values where they are a closed set). Host, then per map its amount,
     * instance identifier and characteristics, then the job fields.
     */
    public static List<Frame> attributes(HostState d, long tid) {
        List<ObjectNode> attrs = new ArrayList<>();
        attrs.add(attr("host.name", "STRING", "host", "The execution host this rsmapd serves", null, null,
                d.host(), List.of(d.host())));
        attrs.add(attr("host.generation", "INT", "generation", "Configuration generation (RELOAD adds one)", 1L, null,
                null, List.of()));
        for (ResourceMap rm : allMaps(d)) {
            String base = "map." + rm.name();
            attrs.add(attr(base + ".amount", "INT", rm.complex().shortcut().isEmpty() ? rm.name() : rm.complex().shortcut(),
                    "Instances of resource map " + rm.name() + " on this host", 0L, (long) rm.amount(),
                    rm.complex().defaultValue(), List.of()));
            Set<String> ids = new LinkedHashSet<>();
            rm.instances().forEach(i -> ids.add(i.id()));
            attrs.add(attr(base + ".id", "STRING", "id", "Identifier of an instance of " + rm.name()
                    + " (shared as many ways as it is listed)", null, null, null, List.copyOf(ids)));
            Map<String, List<Value>> chars = new LinkedHashMap<>();
            rm.instances().forEach(i -> i.characteristics().asMap().forEach((k, v) ->
                    chars.computeIfAbsent(k, x -> new ArrayList<>()).add(v)));
            chars.forEach((k, vs) -> attrs.add(characteristic(base + "." + k, rm.name(), k, vs)));
        }
        attrs.add(attr("job.id", "STRING", "job", "Job identifier (job, or job.task for an array task)", null, null,
                null, List.of()));
        attrs.add(attr("job.user", "STRING", "user", "The job owner", null, null, null, List.of()));
        attrs.add(attr("job.request", "STRING", "request", "The job's resource-map request (rsmap request language)",
                null, null, null, List.of()));
        attrs.add(attr("job.slots", "INT", "slots", "Slots of the job on this host", 1L, null, "1", List.of()));
        attrs.add(attr("job.grants", "GRANT", "grants", "Granted identifiers: host -> map -> ids, one per instance",
                null, null, null, List.of()));
        attrs.add(attr("job.env", "ENV", "env", "The SGE_HGR_<map> variables the job sees", null, null, null, List.of()));
        // after the job fields so that the ids above stay what they were: the slot capacity and
        // each host attribute, typed as filters read it (STRING, NUMBER, VERSION, BOOLEAN).
        if (d.slots().isPresent()) {
            attrs.add(attr("host.slots", "INT", "slots", "Slot capacity of this host", 0L, null, null, List.of()));
        }
        d.attributes().values().forEach((name, v) -> attrs.add(attr("host.attr." + name, v.type().name(), name,
                "Host attribute " + name + " (" + v.type() + "), for node filters", null, null, null, List.of())));
        ObjectNode nvidia = d.devices.facts();
        if (nvidia != null) {
            attrs.add(attr("host.nvidia", "NVIDIA", "nvidia", "What NVML reports: driver, cuda, and each card's index, "
                    + "uuid, model, memory, numa_node, pci, compute_capability, minor (docs/gpus.md)", null, null, null,
                    List.of()));
        }
        List<Frame> out = new ArrayList<>();
        Map<String, Integer> ids = new LinkedHashMap<>();
        for (int i = 0; i < attrs.size(); i++) {
            ObjectNode a = JSON.createObjectNode().put("id", i + 1);
            a.setAll(attrs.get(i));
            ids.put(a.path("name").asText(), i + 1);
            out.add(Frame.of(tid, Code.ATTR_DEF.value(), a.toString()));
        }
        // the PTP proxy protocol, LAUNCH_DEF: the attributes needed to launch (here: to start) a job.
        ObjectNode launch = JSON.createObjectNode().put("command", "JOB_START");
        for (String name : List.of("job.id", "job.user", "job.slots", "job.request")) {
            launch.withArray("attrs").add(ids.get(name));
        }
        launch.withArray("required").add(ids.get("job.id")).add(ids.get("job.request"));
        out.add(Frame.of(tid, Code.LAUNCH_DEF.value(), launch.toString()));
        // ELEMENT_DEF: the elements of the model, each with its attribute values by id - the host, its maps,
        // their instances in configured order.
        ObjectNode hostElement = JSON.createObjectNode().put("element", "host").put("name", d.host());
        hostElement.putObject("attrs").put(Integer.toString(ids.get("host.name")), d.host())
                .put(Integer.toString(ids.get("host.generation")), d.generation());
        if (d.slots().isPresent()) {
            hostElement.with("attrs").put(Integer.toString(ids.get("host.slots")), d.slots().getAsInt());
        }
        d.attributes().text().forEach((name, v) -> hostElement.with("attrs").put(Integer.toString(ids.get("host.attr."
                + name)), v));
        if (nvidia != null) {
            hostElement.with("attrs").set(Integer.toString(ids.get("host.nvidia")), nvidia);
        }
        out.add(Frame.of(tid, Code.ELEMENT_DEF.value(), hostElement.toString()));
        for (ResourceMap rm : allMaps(d)) {
            String base = "map." + rm.name();
            ObjectNode m = JSON.createObjectNode().put("element", "map").put("name", rm.name());
            m.putObject("attrs").put(Integer.toString(ids.get(base + ".amount")), rm.amount());
            out.add(Frame.of(tid, Code.ELEMENT_DEF.value(), m.toString()));
            for (int i = 0; i < rm.instances().size(); i++) {
                Instance inst = rm.instances().get(i);
                ObjectNode e = JSON.createObjectNode().put("element", "instance").put("map", rm.name()).put("index", i);
                ObjectNode values = e.putObject("attrs").put(Integer.toString(ids.get(base + ".id")), inst.id());
                inst.characteristics().asMap().forEach((k, v) -> values.put(Integer.toString(ids.get(base + "." + k)),
                        v.text()));
                out.add(Frame.of(tid, Code.ELEMENT_DEF.value(), e.toString()));
            }
        }
        return out;
    }

    /** The maps of this host, then those of the global host. */
    private static List<ResourceMap> allMaps(HostState d) {
        List<ResourceMap> out = new ArrayList<>();
        d.cluster().hosts().values().forEach(v -> out.addAll(v.resourceMaps()));
        return out;
    }

    private static ObjectNode characteristic(String name, String map, String key, List<Value> values) {
        ValueType type = values.get(0).type();
        Value min = null;
        Value max = null;
        Set<String> texts = new TreeSet<>();
        for (Value v : values) {
            if (type.isNumeric() && v.type() == type) {
                min = min == null || v.compareTo(min) < 0 ? v : min;
                max = max == null || v.compareTo(max) > 0 ? v : max;
            }
            texts.add(v.text());
        }
        ObjectNode a = attr(name, type.name(), key, "Characteristic " + key + " of the instances of " + map, null, null,
                null, type.isNumeric() ? List.of() : List.copyOf(texts));
        if (min != null && type == ValueType.INT) {
            a.put("min", (long) min.number()).put("max", (long) max.number()); // an INT travels as a number
        } else if (min != null) {
            a.put("min", min.text()).put("max", max.text());
        }
        return a;
    }

    private static ObjectNode attr(String name, String type, String shortName, String longName, Long min, Long max,
                                   String dflt, List<String> values) {
        ObjectNode a = JSON.createObjectNode().put("name", name).put("type", type).put("short", shortName)
                .put("long", longName);
        if (min == null) {
            a.putNull("min");
        } else {
            a.put("min", min);
        }
        if (max == null) {
            a.putNull("max");
        } else {
            a.put("max", max);
        }
        if (dflt != null && type.equals("INT") && dflt.matches("-?[0-9]{1,18}")) {
            a.put("default", Long.parseLong(dflt)); // an INT travels as a number
        } else {
            a.put("default", dflt == null || dflt.isEmpty() ? null : dflt);
        }
        values.forEach(a.putArray("values")::add);
        return a;
    }
}
