// The map of slices built from NVML (docs/gpus.md, "Partitions on demand"): one instance per possible
// placement of every profile of every card with MIG mode on, with the characteristics a request names.
package rsmap.daemon.devices;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import rsmap.complex.ComplexTable;
import rsmap.device.nvml.Gpu;
import rsmap.device.nvml.Inventory;
import rsmap.device.nvml.MigCard;
import rsmap.map.DeviceList;

/**
 * Instances are ordered smallest profile first (so that {@code mig=1[memory>=20G]} takes the smallest profile
 * that satisfies it: the core takes the first qualifying instance in configured order), and within a profile
 * from the highest placement down (small slices fill the card from its end, keeping the low placements that
 * large profiles need free longest). Each carries, where the complex table declares them: {@code profile},
 * {@code slices} (compute slices), {@code memory} (the profile's), the card's {@code model}, {@code numa_node},
 * {@code pci}, {@code compute_capability}, and {@code devices=} of the card's node and the driver's shared
 * nodes (JOB_START adds the slice's capability nodes once it exists).
 */
public final class MigMap {
    /** What a slice may carry besides the card's characteristics (GpuMap's, without uuid and memory). */
    static final List<String> OWN = List.of("profile", "slices", "memory");
    private static final List<String> CARD = List.of("model", "numa_node", "pci", "compute_capability");

    private MigMap() {
    }

    /** The placements of every enabled card, in the map's order. */
    static List<MigSlot> slots(List<MigCard> cards) {
        record Row(MigCard.Profile p, MigCard c, MigCard.Placement at) {
        }
        List<Row> rows = new ArrayList<>();
        for (MigCard c : cards) {
            if (c.enabled()) {
                c.profiles().forEach(p -> p.placements().forEach(at -> rows.add(new Row(p, c, at))));
            }
        }
        rows.sort(Comparator.comparingInt((Row r) -> r.p().slices()).thenComparingLong(r -> r.p().memoryMib())
                .thenComparing(r -> r.p().name()).thenComparingInt(r -> r.c().index())
                .thenComparing(r -> -r.at().start()));
        return rows.stream().map(r -> new MigSlot(r.c().index(), r.p().name(), r.at().start())).toList();
    }

    /** {@code MAP=N(id[...] ...)} for {@code cards}; {@code MAP=0} when none has MIG on. */
    public static String entry(String map, List<MigCard> cards, Inventory inv, ComplexTable table, Path devDir) {
        boolean devices = table.find(DeviceList.CHARACTERISTIC).isPresent();
        List<String> instances = new ArrayList<>();
        for (MigSlot s : slots(cards)) {
            MigCard c = card(cards, s.card()).orElseThrow();
            MigCard.Profile p = c.profile(s.profile()).orElseThrow();
            Optional<Gpu> g = inv.gpus().stream().filter(x -> x.index() == c.index()).findFirst();
            List<String> block = new ArrayList<>();
            if (devices && g.isPresent()) {
                block.add(DeviceList.CHARACTERISTIC + "=" + GpuMap.devices(g.get(), devDir));
            }
            if (declared(table, "profile")) {
                block.add("profile=" + p.name());
            }
            if (declared(table, "slices")) {
                block.add("slices=" + p.slices());
            }
            if (declared(table, "memory")) {
                block.add("memory=" + p.memoryMib() + "M");
            }
            for (String n : CARD) {
                if (declared(table, n) && g.isPresent()) {
                    GpuMap.value(n, g.get()).ifPresent(v -> block.add(n + "=" + v));
                }
            }
            instances.add(s + (block.isEmpty() ? "" : "[" + String.join(",", block) + "]"));
        }
        return map + "=" + instances.size() + (instances.isEmpty() ? "" : "(" + String.join(" ", instances) + ")");
    }

    static Optional<MigCard> card(List<MigCard> cards, int index) {
        return cards.stream().filter(c -> c.index() == index).findFirst();
    }

    /** The slice NVML reports at {@code slot}'s place (its card, profile and first memory slice), if any. */
    static Optional<MigCard.Slice> slice(List<MigCard> cards, MigSlot slot) {
        return card(cards, slot.card()).flatMap(c -> c.slices().stream().filter(x -> at(x, slot)).findFirst());
    }

    /** Whether slice {@code x} is at {@code slot}'s place on its card. */
    static boolean at(MigCard.Slice x, MigSlot slot) {
        return x.placement().start() == slot.start() && x.profile().equals(slot.profile());
    }

    private static boolean declared(ComplexTable table, String name) {
        return table.find(name).filter(x -> x.name().equals(name) && !x.isResourceMap()).isPresent();
    }
}
