// The fields of a simulate operation: strings, whole seconds, booleans and host slots.
package rsmap.sim;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/** Readers that throw {@link Malformed} naming the field and the problem. */
final class Fields {
    private Fields() {
    }

    static String text(JsonNode n, String field, boolean required) throws Malformed {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            if (required) {
                throw new Malformed(n.path("op").asText("operation") + " needs '" + field + "'");
            }
            return null;
        }
        if (v.isTextual()) {
            if (v.asText().isEmpty()) {
                throw new Malformed("'" + field + "' is empty");
            }
            return v.asText();
        }
        if (v.isIntegralNumber()) {
            return v.asText(); // "job": 7 is job "7"
        }
        throw new Malformed("'" + field + "' must be a string");
    }

    static long time(JsonNode n, String field, long dflt) throws Malformed {
        JsonNode v = n.get(field);
        if (v == null) {
            return dflt;
        }
        boolean whole = v.isIntegralNumber() && v.canConvertToLong()
                || v.isFloatingPointNumber() && v.asDouble() == Math.rint(v.asDouble()) && Math.abs(v.asDouble()) < 9e18;
        if (!whole || v.asLong() < 0) {
            throw new Malformed("'" + field + "' must be a whole number of seconds, 0 or more");
        }
        return v.asLong(); // 1000.0 and 1e3 are 1000
    }

    static boolean bool(JsonNode n, String field) throws Malformed {
        JsonNode v = n.get(field);
        if (v == null) {
            return false;
        }
        if (!v.isBoolean()) {
            throw new Malformed("'" + field + "' must be true or false");
        }
        return v.asBoolean();
    }

    static Map<String, Integer> hosts(JsonNode n) throws Malformed {
        JsonNode v = n.get("hosts");
        if (v == null || !v.isObject() || v.size() == 0) {
            throw new Malformed("'hosts' must be an object of host to slots, e.g. {\"node01\":1}");
        }
        Map<String, Integer> hosts = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isIntegralNumber() || !e.getValue().canConvertToInt() || e.getValue().asInt() < 1) {
                throw new Malformed("slots of host " + e.getKey() + " must be a whole number, 1 or more");
            }
            hosts.put(e.getKey(), e.getValue().asInt());
        }
        return hosts;
    }
}
