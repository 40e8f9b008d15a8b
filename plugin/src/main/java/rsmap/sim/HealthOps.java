// rsmap simulate's taint and untaint: an instance's health as an admin's drain or a sick card sets it
// (docs/health.md), so that scripts show what the allocation core does around tainted instances.
package rsmap.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import rsmap.alloc.Cluster;
import rsmap.alloc.Decision;
import rsmap.realloc.Reallocs;

/**
 * {@code {"op":"taint","host":"node01","map":"gpu","id":"0","reason":"Xid 79"}} taints every share of the
 * identifier; {@code {"op":"untaint",...}} clears it and answers a start line for each waiting job that
 * starts on it. A refusal (no such host, map or identifier) changes nothing.
 */
final class HealthOps {
    private final Cluster cluster;
    private final Reallocs reallocs;
    private final Lines lines;

    HealthOps(Cluster cluster, Reallocs reallocs, Lines lines) {
        this.cluster = cluster;
        this.reallocs = reallocs;
        this.lines = lines;
    }

    List<String> taint(JsonNode n, long time) throws Malformed {
        String reason = Fields.text(n, "reason", false);
        return answer(n, "taint", (host, map, id) -> cluster.taint(host, map, id,
                reason == null || reason.isBlank() ? "tainted" : reason, time));
    }

    List<String> untaint(JsonNode n, long time) throws Malformed {
        return answer(n, "untaint", (host, map, id) -> cluster.untaint(host, map, id, time));
    }

    private interface Change {
        Decision apply(String host, String map, String id);
    }

    private List<String> answer(JsonNode n, String op, Change change) throws Malformed {
        String host = Fields.text(n, "host", true);
        String map = Fields.text(n, "map", true);
        String id = Fields.text(n, "id", true);
        ObjectNode o = lines.echo(op, "host", host);
        o.put("map", map).put("id", id);
        Decision d = change.apply(host, map, id);
        o.put("ok", !d.isRefused());
        if (d.isRefused()) {
            o.put("error", d.error());
        }
        List<String> out = new ArrayList<>();
        out.add(lines.write(o));
        lines.events(reallocs.events(d), out);
        return out;
    }
}
