// The fields of the journal's records that more than one record (and the authority's views) carry: a grant as
// host -> map -> ids, a job's slices by place, an alloc id; each written one way and read with its check.
package rsmap.daemon.records;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import rsmap.alloc.Grant;
import rsmap.daemon.devices.MigSlot;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.GrantJson;

/** Static codecs for {@link JournalRecord}; an IOException says what does not make sense in a field. */
public final class JournalFields {
    private JournalFields() {
    }

    /** {@code grant} under {@code key}: host -> map -> ids, in the one shape every grant has ({@link GrantJson}). */
    static void put(ObjectNode r, String key, Grant grant) {
        r.set(key, GrantJson.of(grant));
    }

    /** A record's own copy of a job's slices by place, in their order. */
    static Map<String, String> copy(Map<String, String> slices) {
        return slices.isEmpty() ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(slices));
    }

    /** A job's slices by place ({@link #slices}); none written when it holds no place of the map of slices. */
    static void putSlices(ObjectNode r, Map<String, String> slices) {
        if (!slices.isEmpty()) {
            ObjectNode m = r.putObject("slices");
            slices.forEach(m::put);
        }
    }

    /**
     * A record's {@code slices}: each place (card:profile@placement) of the job's on the map of slices to its
     * slice's MIG UUID, "" where none was made; empty when absent (a record of an earlier build, or no place).
     */
    static Map<String, String> slices(JsonNode r) throws IOException {
        if (!r.has("slices")) {
            return Map.of();
        }
        if (!r.path("slices").isObject()) {
            throw new IOException("slices is an object of a slice's place to its MIG UUID");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (var it = r.path("slices").fields(); it.hasNext();) {
            var e = it.next();
            String uuid = e.getValue().asText();
            if (MigSlot.parse(e.getKey()).isEmpty() || !e.getValue().isTextual()
                    || !uuid.isEmpty() && (uuid.isBlank() || !uuid.strip().equals(uuid))) {
                throw new IOException("slices: " + Args.quote(e.getKey()) + " is not a slice's place (card:profile@"
                        + "placement) with its MIG UUID (\"\": none made)");
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    /** A record's alloc_id: 0 when absent. */
    static long allocId(JsonNode r) throws IOException {
        if (!r.has("alloc_id")) {
            return 0;
        }
        if (!r.path("alloc_id").canConvertToLong() || !r.path("alloc_id").isIntegralNumber() || r.path("alloc_id").asLong() < 1) {
            throw new IOException("alloc_id is a whole number of at least 1");
        }
        return r.path("alloc_id").asLong();
    }

    /** host -> map -> ids, read by hand (a replay reads thousands). */
    public static Grant grant(JsonNode g) throws IOException {
        Map<String, Map<String, List<String>>> byHost = new LinkedHashMap<>();
        for (var hosts = g.fields(); hosts.hasNext();) {
            var h = hosts.next();
            if (!h.getValue().isObject()) {
                throw new IOException("grant: host " + Args.quote(h.getKey()) + " is not map -> ids");
            }
            Map<String, List<String>> maps = new LinkedHashMap<>();
            for (var ms = h.getValue().fields(); ms.hasNext();) {
                var m = ms.next();
                if (!m.getValue().isArray()) {
                    throw new IOException("grant: map " + Args.quote(m.getKey()) + " is not a list of ids");
                }
                List<String> ids = new ArrayList<>(m.getValue().size());
                for (JsonNode id : m.getValue()) {
                    if (!id.isTextual()) {
                        throw new IOException("grant: map " + Args.quote(m.getKey()) + " holds a non-string id");
                    }
                    ids.add(id.asText());
                }
                maps.put(m.getKey(), ids);
            }
            byHost.put(h.getKey(), maps);
        }
        return new Grant(byHost);
    }
}
