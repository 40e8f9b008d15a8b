// The exact instances a take-away (realloc) or a give-back (release) names: by identifier ("ids") or as
// an R version 1 in rsmapd's instance form ("R"), the form R_delta_sub names them in.
package rsmap.realloc;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Grant;
import rsmap.flux.R;

/**
 * {@code "ids":{"node01":{"gpu":["1","1"]}}} (host -> map -> identifiers, one per instance, shares
 * repeat) or {@code "R":{...}} (a JSON object, or a string of JSON or YAML: the instance indices of
 * docs/realloc.md, "Granted resource-map instances in R"), never both. Read in two steps, as the daemon
 * answers them differently: {@link #read} checks the fields' form (a wrong form is a malformed command),
 * {@link #resolve} what they name against the cluster (a fault there is a DENY or a refused RELEASE).
 *
 * @param ids the instances by identifier; empty when none or when {@code r} names them
 * @param r   the text of the R naming them, when given so
 */
public record InstanceNames(Grant ids, Optional<String> r) {
    public static final InstanceNames NONE = new InstanceNames(Grant.NONE, Optional.empty());
    private static final String IDS_SHAPE = "'ids' must be an object of host to map to a list of identifiers,"
            + " e.g. {\"node01\":{\"gpu\":[\"1\"]}}";

    public InstanceNames {
        Objects.requireNonNull(ids);
        Objects.requireNonNull(r);
        if (!ids.isEmpty() && r.isPresent()) {
            throw new IllegalArgumentException("instances are named by 'ids' or by 'R', not both");
        }
    }

    public boolean isEmpty() {
        return ids.isEmpty() && r.isEmpty();
    }

    /**
     * The {@code ids} and {@code R} members of {@code fields} (other members are the caller's); NONE when
     * neither is there.
     *
     * @throws ParseException when both are there, or either is of the wrong form (its problem names the
     *                        member; the input is {@code fields} as JSON)
     */
    public static InstanceNames read(JsonNode fields) throws ParseException {
        if (fields.has("ids") && fields.has("R")) {
            throw malformed(fields, "give the instances as 'ids' or as 'R', not both");
        }
        Optional<String> r = document(fields, "R", "an R version 1");
        return new InstanceNames(ids(fields), r);
    }

    /**
     * The instances named, as a grant: {@code ids} as given, or {@code R} read by {@link R#parse} and
     * {@link RDelta#grantOf} against {@code cluster}.
     *
     * @throws ParseException when the R is invalid, does not fit the cluster's configuration, or names no
     *                        instance; the problem opens with {@code R: } and the JSON path
     */
    public Grant resolve(Cluster cluster, Limits limits) throws ParseException {
        if (r.isEmpty()) {
            return ids;
        }
        String text = r.get();
        Grant g;
        try {
            g = RDelta.grantOf(R.parse(text, limits), cluster);
        } catch (ParseException e) {
            throw ParseException.atPath("R: " + e.problem(), e.input(), e.offset());
        }
        if (g.isEmpty()) {
            throw ParseException.atPath("R: $.execution.R_lite: names no resource-map instance (cores are not read:"
                    + " rsmapd grants none)", text, 0);
        }
        return g;
    }

    /**
     * A member holding a document (a jobspec or an R): a JSON object, or a string of JSON or YAML; its
     * text, empty when the member is absent.
     */
    static Optional<String> document(JsonNode fields, String key, String what) throws ParseException {
        JsonNode v = fields.get(key);
        if (v == null) {
            return Optional.empty();
        }
        if (v.isObject()) {
            return Optional.of(v.toString());
        }
        if (v.isTextual() && !v.textValue().isBlank()) {
            return Optional.of(v.textValue());
        }
        throw malformed(fields, "'" + key + "' must be " + what + ": a JSON object, or a string of JSON or YAML");
    }

    static ParseException malformed(JsonNode fields, String problem) {
        return new ParseException(problem, fields.toString(), 0);
    }

    private static Grant ids(JsonNode fields) throws ParseException {
        JsonNode v = fields.get("ids");
        if (v == null) {
            return Grant.NONE;
        }
        if (!v.isObject() || v.size() == 0) {
            throw malformed(fields, IDS_SHAPE);
        }
        Map<String, Map<String, List<String>>> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> hs = v.fields(); hs.hasNext(); ) {
            Map.Entry<String, JsonNode> h = hs.next();
            if (!h.getValue().isObject() || h.getValue().size() == 0) {
                throw malformed(fields, IDS_SHAPE);
            }
            for (Iterator<Map.Entry<String, JsonNode>> ms = h.getValue().fields(); ms.hasNext(); ) {
                Map.Entry<String, JsonNode> m = ms.next();
                if (!m.getValue().isArray() || m.getValue().size() == 0) {
                    throw malformed(fields, IDS_SHAPE);
                }
                List<String> ids = new ArrayList<>();
                for (JsonNode id : m.getValue()) {
                    if (!id.isTextual() || id.asText().isEmpty()) {
                        throw malformed(fields, IDS_SHAPE);
                    }
                    ids.add(id.asText());
                }
                out.computeIfAbsent(h.getKey(), k -> new LinkedHashMap<>()).put(m.getKey(), ids);
            }
        }
        return new Grant(out);
    }
}
