// rsmap discover's MIG part (docs/gpus.md, "Partitions on demand"): each MIG-capable card's mode, its
// profiles with their possible placements, the slices that exist, and the mig_map entry rsmapd builds.
package rsmap.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import rsmap.complex.ComplexTable;
import rsmap.daemon.devices.MigMap;
import rsmap.device.nvml.Inventory;
import rsmap.device.nvml.Mig;
import rsmap.device.nvml.MigCard;
import rsmap.device.nvml.NvmlException;

/** A driver without MIG, or no MIG-capable card: nothing to list (an empty list in JSON). */
final class DiscoverMig {
    private DiscoverMig() {
    }

    static List<MigCard> read(String lib, PrintWriter err) {
        try {
            return Mig.load(lib).read();
        } catch (NvmlException e) {
            err.println("warning: MIG: " + e.getMessage());
            return List.of();
        }
    }

    /** {@code "mig": [{index, uuid, mode, profiles: [{name, slices, memory, placements}], instances: [...]}]}. */
    static ArrayNode json(List<MigCard> cards) {
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (MigCard c : cards) {
            ObjectNode o = out.addObject().put("index", c.index()).put("uuid", c.uuid())
                    .put("mode", c.enabled() ? "enabled" : "disabled");
            ArrayNode profiles = o.putArray("profiles");
            for (MigCard.Profile p : c.profiles()) {
                ObjectNode j = profiles.addObject().put("name", p.name()).put("slices", p.slices())
                        .put("memory", p.memoryMib() + "M");
                ArrayNode at = j.putArray("placements");
                p.placements().forEach(x -> at.addObject().put("start", x.start()).put("size", x.size()));
            }
            ArrayNode instances = o.putArray("instances");
            for (MigCard.Slice s : c.slices()) {
                ObjectNode j = instances.addObject().put("profile", s.profile()).put("gi", s.gi())
                        .put("placement", s.placement().start());
                s.ci().ifPresentOrElse(ci -> j.put("ci", ci), () -> j.putNull("ci"));
                j.put("uuid", s.uuid().orElse(""));
            }
        }
        return out;
    }

    static void print(List<MigCard> cards, PrintWriter out) {
        for (MigCard c : cards) {
            out.println("gpu " + c.index() + "  MIG " + (c.enabled() ? "enabled" : "disabled"));
            for (MigCard.Profile p : c.profiles()) {
                out.printf("  profile %-10s %d slices  %dM  placements %s%n", p.name(), p.slices(), p.memoryMib(),
                        p.placements().stream().map(MigCard.Placement::toString).toList());
            }
            for (MigCard.Slice s : c.slices()) {
                out.printf("  slice gi %d ci %s  %s at %s  %s%n", s.gi(), s.ci().map(Object::toString).orElse("-"),
                        s.profile(), s.placement(), s.uuid().orElse(""));
            }
        }
    }

    /** The mig_map entry rsmapd would build. */
    static String entry(String map, List<MigCard> cards, Inventory inv, ComplexTable table, Path devDir) {
        return MigMap.entry(map, cards, inv, table, devDir);
    }
}
