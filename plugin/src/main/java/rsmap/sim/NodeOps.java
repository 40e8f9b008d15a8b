// The simulate ops of host attributes and node filters: attribute-types, filter, and the
// slots and attributes of the host op.
package rsmap.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.node.AttributeTypes;
import rsmap.node.Filter;
import rsmap.node.Filters;
import rsmap.node.Node;
import rsmap.node.NodeAttributes;
import rsmap.node.Verdict;

/**
 * The hosts as filters see them, beside the cluster (not inside it): name, slots and attributes, in
 * the order hosts were first configured. The global host is not a host a job runs on and is never
 * filtered.
 */
final class NodeOps {
    private final Lines lines;
    private final Limits limits;
    private final Map<String, Node> nodes = new LinkedHashMap<>();
    private AttributeTypes types = AttributeTypes.NONE;

    NodeOps(Lines lines, Limits limits) {
        this.lines = lines;
        this.limits = limits;
    }

    /**
     * The host's node with the op's {@code slots} and {@code attributes}, each kept from before when the
     * op leaves it out; nothing is stored yet (a refused host op changes nothing).
     */
    Node read(JsonNode n, String host) throws Malformed, ParseException {
        Node before = nodes.getOrDefault(host, Node.of(host, NodeAttributes.NONE));
        OptionalInt slots = before.slots();
        if (n.has("slots")) {
            JsonNode s = n.get("slots");
            if (!s.isIntegralNumber() || !s.canConvertToInt() || s.asInt() < 0) {
                throw new Malformed("'slots' must be a whole number, 0 or more");
            }
            slots = OptionalInt.of(s.asInt());
        }
        NodeAttributes attributes = before.attributes();
        if (n.has("attributes")) {
            attributes = NodeAttributes.parse(attributes(n.get("attributes")), types, limits);
        }
        return new Node(host, slots, attributes);
    }

    /** Name to value as text: strings, numbers and booleans are all read from their text. */
    private static Map<String, String> attributes(JsonNode a) throws Malformed {
        if (!a.isObject()) {
            throw new Malformed("'attributes' must be an object of name to value, e.g. {\"arch\":\"x86_64\"}");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = a.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode v = e.getValue();
            if (!v.isTextual() && !v.isNumber() && !v.isBoolean()) {
                throw new Malformed("attribute '" + e.getKey() + "' must be a string, a number or a boolean");
            }
            out.put(e.getKey(), v.asText());
        }
        return out;
    }

    void put(Node node) {
        nodes.put(node.name(), node);
    }

    /** {@code {"op":"attribute-types","types":{...}}}: declared once; every host's attributes read again. */
    List<String> declare(JsonNode n) throws Malformed {
        JsonNode t = n.get("types");
        if (t == null || !t.isObject()) {
            throw new Malformed("'types' must be an object of name to type, e.g. {\"kernel\":\"version\"}");
        }
        ObjectNode o = lines.json().createObjectNode();
        o.put("op", "attribute-types");
        Map<String, String> declared = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = t.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw new Malformed("the type of '" + e.getKey() + "' must be a string");
            }
            declared.put(e.getKey(), e.getValue().asText());
        }
        String host = "";
        try {
            AttributeTypes next = types.declare(AttributeTypes.of(declared));
            Map<String, Node> retyped = new LinkedHashMap<>();
            for (Node node : nodes.values()) {
                host = node.name();
                retyped.put(host, new Node(host, node.slots(), node.attributes().retype(next, limits)));
            }
            types = next;
            nodes.putAll(retyped);
            o.put("ok", true);
        } catch (ParseException e) {
            o.put("ok", false);
            o.put("error", (host.isEmpty() ? "" : "host " + host + ": ") + e.problem());
        }
        return List.of(lines.write(o));
    }

    /**
     * {@code {"op":"filter","filter":F,"admin":A}}: {@code "pass"} the hosts passing, {@code "fail"} each
     * other host with the attribute of the first failing comparison, the filter it belongs to
     * ({@code "source":"admin"} or {@code "job"}) and why.
     */
    List<String> filter(JsonNode n) throws Malformed {
        String text = Fields.text(n, "filter", true);
        String admin = Fields.text(n, "admin", false);
        ObjectNode o = lines.json().createObjectNode();
        o.put("op", "filter");
        Filter job;
        Optional<Filter> limit = Optional.empty();
        try {
            if (admin != null) {
                try {
                    limit = Optional.of(Filter.parse(admin, types, limits));
                } catch (ParseException e) {
                    throw new ParseException("admin: " + e.problem(), e.input(), e.offset());
                }
            }
            job = Filter.parse(text, types, limits);
        } catch (ParseException e) {
            o.put("filter", text);
            o.put("ok", false);
            o.put("error", e.problem().startsWith("admin: ") ? "admin: " + e.location() + ": "
                    + e.problem().substring(7) : e.getMessage());
            return List.of(lines.write(o));
        }
        o.put("filter", job.toString());
        limit.ifPresent(f -> o.put("admin", f.toString()));
        Filters filters = Filters.combine(limit, Optional.of(job));
        ArrayNode pass = o.putArray("pass");
        ArrayNode fail = o.putArray("fail");
        for (Node node : nodes.values()) {
            if (node.name().equals(Cluster.GLOBAL)) {
                continue;
            }
            Verdict v = filters.evaluate(node);
            if (v.passed()) {
                pass.add(node.name());
            } else {
                Verdict.Failure f = v.failure().get();
                ObjectNode x = fail.addObject();
                x.put("host", node.name());
                x.put("attribute", f.attribute());
                x.put("source", f.source());
                x.put("why", f.why());
            }
        }
        return List.of(lines.write(o));
    }

    /** The hosts by name, as placement reads them; a live view, not a copy. */
    Map<String, Node> byName() {
        return java.util.Collections.unmodifiableMap(nodes);
    }

    /** A job's filter, read with the declared types. */
    Filter parse(String filter) throws ParseException {
        return Filter.parse(filter, types, limits);
    }

    /** The hosts in configured order (for tests and later placement). */
    List<Node> nodes() {
        return new ArrayList<>(nodes.values());
    }
}
