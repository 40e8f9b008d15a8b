// rsmap simulate's MIG cards (docs/gpus.md, "Partitions on demand"): a host op's "mig_cards" become the map of
// slices the daemon would build from NVML, and the exclusions that make each card one pool.
package rsmap.sim;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import rsmap.alloc.Exclusions;
import rsmap.complex.ComplexTable;

/**
 * {@code "mig_cards": [{"gpu_id": "0", "profiles": [{"name": "1g.10gb", "slices": 1, "memory_mib": 9856,
 * "placements": [0, 1, 2, 3, 4, 5, 6]}, ...]}]} (the stand-in NVML's profile shape; {@code placement_size}
 * as there: else 4 for 3 slices, 8 for 7, else the slices), with {@code "mig_map"} (default {@code mig}) and
 * {@code "gpu_map"} (default {@code gpu}): card i's slots are {@code i:PROFILE@START}, ordered as the daemon
 * orders them (smallest profile first, highest placement first), and exclude the card's instance {@code gpu_id}
 * of gpu_map and each other where their placements overlap.
 */
final class MigCards {
    private MigCards() {
    }

    record Built(String entry, Exclusions exclusions) {
    }

    private record Slot(int card, String gpuId, String profile, int slices, long memoryMib, int start, int size) {
        String id() {
            return card + ":" + profile + "@" + start;
        }

        boolean overlaps(Slot o) {
            return card == o.card && start < o.start + o.size && o.start < start + size;
        }
    }

    static Built build(JsonNode n, ComplexTable table) throws Malformed {
        String mig = n.has("mig_map") ? Fields.text(n, "mig_map", true) : "mig";
        String gpu = n.has("gpu_map") ? Fields.text(n, "gpu_map", true) : "gpu";
        JsonNode cards = n.get("mig_cards");
        if (!cards.isArray()) {
            throw new Malformed("mig_cards is a list of cards");
        }
        List<Slot> slots = new ArrayList<>();
        for (int c = 0; c < cards.size(); c++) {
            JsonNode card = cards.get(c);
            String gpuId = card.has("gpu_id") ? card.get("gpu_id").asText() : Integer.toString(c);
            if (!card.path("profiles").isArray()) {
                throw new Malformed("mig_cards[" + c + "]: profiles is a list");
            }
            for (JsonNode p : card.get("profiles")) {
                String name = p.path("name").asText("");
                int slices = p.path("slices").asInt(0);
                if (!name.matches("[A-Za-z0-9.+_-]{1,32}") || slices < 1 || !p.path("placements").isArray()) {
                    throw new Malformed("mig_cards[" + c + "]: a profile has a name, slices of 1 or more and placements");
                }
                int size = p.path("placement_size").asInt(slices == 3 ? 4 : slices == 7 ? 8 : slices);
                for (JsonNode at : p.get("placements")) {
                    slots.add(new Slot(c, gpuId, name, slices, p.path("memory_mib").asLong(0), at.asInt(), size));
                }
            }
        }
        slots.sort(Comparator.comparingInt(Slot::slices).thenComparingLong(Slot::memoryMib).thenComparing(Slot::profile)
                .thenComparingInt(Slot::card).thenComparing(s -> -s.start()));
        List<String> instances = new ArrayList<>();
        List<Map.Entry<Exclusions.Key, Exclusions.Key>> pairs = new ArrayList<>();
        for (int a = 0; a < slots.size(); a++) {
            Slot s = slots.get(a);
            List<String> block = new ArrayList<>();
            if (declared(table, "profile")) {
                block.add("profile=" + s.profile());
            }
            if (declared(table, "slices")) {
                block.add("slices=" + s.slices());
            }
            if (declared(table, "memory")) {
                block.add("memory=" + s.memoryMib() + "M");
            }
            instances.add(s.id() + (block.isEmpty() ? "" : "[" + String.join(",", block) + "]"));
            Exclusions.Key k = new Exclusions.Key(mig, s.id());
            pairs.add(Map.entry(new Exclusions.Key(gpu, s.gpuId()), k));
            for (int b = a + 1; b < slots.size(); b++) {
                if (s.overlaps(slots.get(b))) {
                    pairs.add(Map.entry(k, new Exclusions.Key(mig, slots.get(b).id())));
                }
            }
        }
        String entry = mig + "=" + instances.size() + (instances.isEmpty() ? "" : "(" + String.join(" ", instances) + ")");
        return new Built(entry, Exclusions.of(pairs, Map.of()));
    }

    private static boolean declared(ComplexTable table, String name) {
        return table.find(name).filter(x -> x.name().equals(name) && !x.isResourceMap()).isPresent();
    }
}
