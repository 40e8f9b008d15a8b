// The grammar of an `rsmap simulate` script: one JSON object per line, an "op" of a closed list, and for
// each op the fields it takes (anything else is the line's error).
package rsmap.sim;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import rsmap.Limits;
import rsmap.realloc.ReallocRequest;

/** The ops and their fields as docs/allocation.md lists them; {@link Simulation} runs what this reads. */
final class Script {
    static final Map<String, Set<String>> FIELDS = Map.ofEntries(
            Map.entry("host", Set.of("op", "host", "complex_values", "slots", "attributes", "time", "mig_cards", "mig_map",
                    "gpu_map")),
            Map.entry("attribute-types", Set.of("op", "types")),
            Map.entry("filter", Set.of("op", "filter", "admin")),
            Map.entry("submit", plus(PlaceOps.OPTION_FIELDS, "op", "job", "master", "time", "runtime", "ar", "reserve",
                    "alternatives")),
            Map.entry("policy", Set.of("op", "alternatives", "ranking")),
            Map.entry("finish", Set.of("op", "job", "time")),
            Map.entry("reserve", Set.of("op", "ar", "request", "hosts", "start", "end", "time")),
            Map.entry("env", Set.of("op", "job", "host", "time")),
            Map.entry("explain", Set.of("op", "request", "host", "time")),
            Map.entry("realloc", plus(ReallocRequest.FIELDS, "op", "job", "tag", "time")),
            Map.entry("release", Set.of("op", "job", "ids", "R", "time")),
            Map.entry("realloc_cancel", Set.of("op", "job", "tag", "time")),
            Map.entry("settings", Set.of("op", "realloc", "realloc_policy")),
            Map.entry("taint", Set.of("op", "host", "map", "id", "reason", "time")),
            Map.entry("untaint", Set.of("op", "host", "map", "id", "time")));

    private Script() {
    }

    /** One line read as an op with its known fields only. */
    static JsonNode parse(ObjectMapper json, String line, Limits limits) throws Malformed {
        if (line.length() > limits.maxInputChars()) {
            throw new Malformed("longer than " + limits.maxInputChars() + " characters");
        }
        JsonNode node;
        try {
            node = json.readTree(line);
        } catch (JsonProcessingException e) {
            throw new Malformed("not JSON: " + e.getOriginalMessage().replace('\n', ' '));
        }
        if (node == null || !node.isObject()) {
            throw new Malformed("an operation is a JSON object");
        }
        String op = Fields.text(node, "op", true);
        Set<String> allowed = FIELDS.get(op);
        if (allowed == null) {
            throw new Malformed("unknown op '" + op + "' (host, submit, finish, reserve, env, explain, realloc,"
                    + " release, realloc_cancel, settings, attribute-types, filter, policy, taint, untaint)");
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!allowed.contains(f)) {
                throw new Malformed("unknown field '" + f + "' for op " + op);
            }
        }
        return node;
    }

    /** A realloc's own fields (ReallocRequest's) and the script's. */
    private static Set<String> plus(Set<String> fields, String... more) {
        Set<String> out = new java.util.HashSet<>(fields);
        out.addAll(List.of(more));
        return Set.copyOf(out);
    }
}
