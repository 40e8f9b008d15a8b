// The health of a registered host's instances as the authority keeps it (docs/health.md): from its
// registration (each instance's "health") and its taint and untaint events, told to PLACE's model.
package rsmap.daemon.health;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Map;
import rsmap.alloc.Cluster;

/** Never decides: the host's own rsmapd keeps its taints; the authority only places around them. */
public final class HealthView {
    private HealthView() {
    }

    /** {@code maps} with the health the event {@code diff} says for its map and identifier (a new tree). */
    public static ObjectNode withHealth(ObjectNode maps, JsonNode diff) {
        String map = diff.path("map").asText("");
        String id = diff.path("id").asText("");
        JsonNode health = diff.path("health");
        if (!maps.path(map).path("instances").isArray() || health.isMissingNode()) {
            return maps;
        }
        ObjectNode copy = maps.deepCopy();
        for (JsonNode inst : copy.path(map).path("instances")) {
            if (inst.isObject() && inst.path("id").asText("").equals(id)) {
                ((ObjectNode) inst).set("health", health);
            }
        }
        return copy;
    }

    /** Taints in {@code model} every instance of {@code host} whose health (as {@code maps} say) is not ok. */
    public static void taint(Cluster model, String host, ObjectNode maps) {
        for (Iterator<Map.Entry<String, JsonNode>> it = maps.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> m = it.next();
            for (JsonNode inst : m.getValue().path("instances")) {
                JsonNode h = inst.path("health");
                if (h.isObject()) {
                    model.taint(host, m.getKey(), inst.path("id").asText(""), h.path("source").asText("") + ": "
                            + h.path("reason").asText("") + " since " + h.path("since").asText(""), model.now());
                }
            }
        }
    }
}
