// The authority's read-only view of every registered host: its maps and instances, and the jobs holding
// them, kept from the host's registration and its grant and release events.
package rsmap.daemon.authority;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import rsmap.daemon.health.HealthView;

/**
 * Never decides: the hosts' own rsmapd grant their maps. A host's view is replaced by each registration
 * (after every reconnect) and follows its events: {@code grant} adds a job, {@code resource-update}
 * changes what it holds, {@code release} removes it, {@code config} replaces the maps. Holders are
 * worked out from the jobs' grants, identifier by identifier in the instances' order (shares repeat).
 * Called under the daemon's lock.
 */
public final class ClusterView {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One host as it last told: its maps (instances with characteristics), its jobs by id. */
    static final class HostView {
        ObjectNode maps = JSON.createObjectNode();
        /** The host's complex_values as it registered them ("" unknown; PLACE rebuilds its maps from them). */
        String complexValues = "";
        /** The host's attributes, name to value as written, and its slot capacity; null: none told. */
        JsonNode attributes;
        JsonNode slots;
        /** What the host's NVML reported (docs/gpus.md): driver, cuda, its cards; null: none told. */
        JsonNode nvidia;
        final Map<String, JsonNode> jobs = new LinkedHashMap<>();
        Instant registered = Instant.EPOCH;
        boolean connected;

        /** A copy that later events do not change (the JSON nodes are replaced by events, never changed). */
        HostView copy() {
            HostView c = new HostView();
            c.maps = maps;
            c.complexValues = complexValues;
            c.attributes = attributes;
            c.slots = slots;
            c.nvidia = nvidia;
            c.jobs.putAll(jobs);
            c.registered = registered;
            c.connected = connected;
            return c;
        }
    }

    private final Map<String, HostView> hosts = new LinkedHashMap<>();

    /** REGISTER: {@code state} is the host's QUERY answer (maps, jobs). */
    void register(String host, JsonNode state) {
        HostView v = new HostView();
        if (state.path("maps").isObject()) {
            v.maps = (ObjectNode) state.path("maps").deepCopy();
        }
        if (state.path("attributes").isObject()) {
            v.attributes = state.path("attributes").deepCopy();
        }
        if (state.path("slots").isIntegralNumber()) {
            v.slots = state.path("slots");
        }
        if (state.path("nvidia").isObject()) {
            v.nvidia = state.path("nvidia").deepCopy();
        }
        for (JsonNode j : state.path("jobs")) {
            v.jobs.put(j.path("job").asText(), j);
        }
        v.complexValues = state.path("complex_values").asText("");
        v.registered = Instant.now();
        v.connected = true;
        hosts.put(host, v);
    }

    /** The host's connection went away: its view stays, marked. */
    void disconnected(String host) {
        HostView v = hosts.get(host);
        if (v != null) {
            v.connected = false;
        }
    }

    /** Every registered host as it last told, in registration order (PLACE builds its model from them). */
    Map<String, HostView> hosts() {
        return java.util.Collections.unmodifiableMap(hosts);
    }

    boolean knows(String host) {
        return hosts.containsKey(host);
    }

    /**
     * The host as filters see it, from its registration; empty when it is not registered, told
     * no attributes, or told values the authority's declared types do not read: then filters are not
     * checked here (the host checks them itself at its JOB_START).
     */
    public java.util.Optional<rsmap.node.Node> node(String host, rsmap.node.AttributeTypes types, rsmap.Limits limits) {
        return node(host, hosts.get(host), types, limits);
    }

    /** The same from a host's view {@code v} (PLACE's snapshot). */
    public static java.util.Optional<rsmap.node.Node> node(String host, HostView v, rsmap.node.AttributeTypes types,
                                                    rsmap.Limits limits) {
        if (v == null || v.attributes == null) {
            return java.util.Optional.empty();
        }
        Map<String, String> text = new LinkedHashMap<>();
        v.attributes.fields().forEachRemaining(e -> text.put(e.getKey(), e.getValue().asText()));
        try {
            rsmap.node.NodeAttributes attrs = rsmap.node.NodeAttributes.parse(text, types, limits);
            java.util.OptionalInt slots = v.slots != null && v.slots.canConvertToInt() && v.slots.intValue() >= 0
                    ? java.util.OptionalInt.of(v.slots.intValue()) : java.util.OptionalInt.empty();
            return java.util.Optional.of(new rsmap.node.Node(host, slots, attrs));
        } catch (rsmap.ParseException | IllegalArgumentException e) {
            return java.util.Optional.empty();
        }
    }

    /** One event of the host's stream (the DIFF JSON it sends its own subscribers). */
    void apply(String host, JsonNode diff) {
        HostView v = hosts.computeIfAbsent(host, h -> new HostView());
        String job = diff.path("job").asText("");
        switch (diff.path("event").asText("")) {
            case "grant":
            case "resource-update":
                JsonNode before = v.jobs.get(job);
                ObjectNode now = before != null && before.isObject() ? ((ObjectNode) before).deepCopy()
                        : JSON.createObjectNode().put("job", job).put("user", diff.path("user").asText(""));
                if (diff.has("grants")) {
                    now.set("grants", diff.get("grants"));
                }
                if (diff.has("releasing")) {
                    now.set("releasing", diff.get("releasing"));
                }
                v.jobs.put(job, now);
                break;
            case "release":
                if (!diff.has("ids")) { // a whole job's end; a RELEASE of taken-away instances names ids
                    v.jobs.remove(job);
                }
                break;
            case "config":
                if (diff.path("maps").isObject()) {
                    v.maps = (ObjectNode) diff.path("maps").deepCopy();
                }
                break;
            case "taint":
            case "untaint":
                v.maps = HealthView.withHealth(v.maps, diff); // docs/health.md: PLACE skips tainted instances
                break;
            default:
                break; // alloc, free: resource-update and release say the same
        }
    }

    /** Every host: connected or not, its maps with each instance's holder, and its jobs. */
    ObjectNode toJson() {
        ObjectNode out = JSON.createObjectNode();
        hosts.forEach((name, v) -> {
            ObjectNode h = out.putObject(name).put("connected", v.connected).put("registered", v.registered.toString());
            if (v.attributes != null) {
                h.set("attributes", v.attributes);
            }
            if (v.slots != null) {
                h.set("slots", v.slots);
            }
            if (v.nvidia != null) {
                h.set("nvidia", v.nvidia);
            }
            ObjectNode maps = h.putObject("maps");
            for (Iterator<Map.Entry<String, JsonNode>> it = v.maps.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> m = it.next();
                ObjectNode map = maps.putObject(m.getKey()).put("amount", m.getValue().path("amount").asInt());
                ArrayNode instances = map.putArray("instances");
                List<String[]> held = holders(v, name, m.getKey());
                for (JsonNode inst : m.getValue().path("instances")) {
                    ObjectNode o = ((ObjectNode) inst.deepCopy());
                    o.remove("blocked"); // the host's exclusions as it registered: no event keeps them up to date here
                    o.put("holder", take(held, inst.path("id").asText()));
                    instances.add(o);
                }
            }
            ArrayNode jobs = h.putArray("jobs");
            v.jobs.values().forEach(jobs::add);
        });
        return out;
    }

    /**
     * MODEL_DEF on the authority describes the cluster: after the global host's elements, one
     * ELEMENT_DEF per registered host ({@code "element":"cluster-host"}), per map of it and per instance, their
     * values by name (the registered hosts' maps have no ATTR_DEF of the authority's: they are theirs).
     */
    public List<ObjectNode> elements() {
        List<ObjectNode> out = new ArrayList<>();
        toJson().fields().forEachRemaining(h -> {
            ObjectNode host = JSON.createObjectNode().put("element", "cluster-host").put("name", h.getKey())
                    .put("connected", h.getValue().path("connected").asBoolean());
            if (h.getValue().has("slots")) {
                host.set("slots", h.getValue().get("slots"));
            }
            if (h.getValue().has("attributes")) {
                host.set("attributes", h.getValue().get("attributes"));
            }
            if (h.getValue().has("nvidia")) {
                host.set("nvidia", h.getValue().get("nvidia"));
            }
            out.add(host);
            h.getValue().path("maps").fields().forEachRemaining(m -> {
                out.add(JSON.createObjectNode().put("element", "cluster-map").put("host", h.getKey())
                        .put("name", m.getKey()).put("amount", m.getValue().path("amount").asInt()));
                int i = 0;
                for (JsonNode inst : m.getValue().path("instances")) {
                    ObjectNode e = JSON.createObjectNode().put("element", "cluster-instance").put("host", h.getKey())
                            .put("map", m.getKey()).put("index", i++);
                    e.set("values", inst);
                    out.add(e);
                }
            });
        });
        return out;
    }

    /** (identifier, job) for every instance the host's jobs hold or are to give back of {@code map}. */
    private static List<String[]> holders(HostView v, String host, String map) {
        List<String[]> out = new ArrayList<>();
        for (JsonNode j : v.jobs.values()) {
            for (String key : new String[] {"grants", "releasing"}) {
                for (JsonNode id : j.path(key).path(host).path(map)) {
                    out.add(new String[] {id.asText(), j.path("job").asText()});
                }
            }
        }
        return out;
    }

    private static String take(List<String[]> held, String id) {
        for (Iterator<String[]> it = held.iterator(); it.hasNext();) {
            String[] h = it.next();
            if (h[0].equals(id)) {
                it.remove();
                return h[1];
            }
        }
        return "";
    }
}
