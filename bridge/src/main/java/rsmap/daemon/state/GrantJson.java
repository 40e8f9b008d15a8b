// A grant as JSON, host -> map -> identifiers: the one shape that the journal's records, STATE, the events and
// the authority's messages carry (docs/protocol.md), so that none of them writes it through another's view.
package rsmap.daemon.state;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import rsmap.alloc.Grant;

/** Writes only; each reader checks what it reads against its own rules ({@code JournalFields}, the wire's). */
public final class GrantJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private GrantJson() {
    }

    /** {@code grant} as {"host": {"map": ["id", ...]}}, hosts and maps in the grant's order, repeats kept. */
    public static ObjectNode of(Grant grant) {
        ObjectNode g = JSON.createObjectNode();
        grant.byHost().forEach((host, maps) -> {
            ObjectNode h = g.putObject(host);
            maps.forEach((map, ids) -> ids.forEach(h.putArray(map)::add));
        });
        return g;
    }
}
