// Which instance of the host's gpu_map is which card: one index built from NVML's inventory and the map as
// configured, asked by health (a card's event or check), MIG (a failed creation's taint, a card and its slices
// as one pool, explain's holder of a whole card) and the GPU variable (the UUIDs of a job's cards).
package rsmap.daemon.devices;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.daemon.config.GpuSettings;
import rsmap.device.nvml.Gpu;
import rsmap.device.nvml.Inventory;
import rsmap.map.DeviceList;
import rsmap.map.Instance;
import rsmap.map.ResourceMap;

/**
 * One rule (docs/gpus.md, "gpu_map"): an instance that lists a card's device node in {@code devices=} (under
 * gpu_dev_dir) is that card's, as gpu_check matches a hand-written map, and one whose devices= names no card's
 * node is no card's; one without devices= is the card its id names by {@code gpu_id} (its index or its UUID; a
 * UUID is read as one in either mode). Immutable; built once per configuration ({@link GpuHost#cards}).
 */
public final class CardIndex {
    static final CardIndex NONE = new CardIndex(Map.of(), Map.of());

    /** Card UUID to the gpu_map ids of its instances, in configured order, each once. */
    private final Map<String, List<String>> idsByCard;
    /** gpu_map id to its card's UUID. */
    private final Map<String, String> cardById;

    private CardIndex(Map<String, List<String>> idsByCard, Map<String, String> cardById) {
        this.idsByCard = idsByCard;
        this.cardById = cardById;
    }

    /** The index of {@code map}'s instances over the cards of {@code inv}. */
    static CardIndex of(Inventory inv, GpuSettings settings, ResourceMap map) {
        Map<String, List<String>> ids = new LinkedHashMap<>();
        Map<String, String> cards = new LinkedHashMap<>();
        for (Instance i : map.instances()) {
            Optional<Gpu> card = cardOf(i, inv, settings);
            if (card.isEmpty() || cards.containsKey(i.id())) {
                continue;
            }
            cards.put(i.id(), card.get().uuid());
            ids.computeIfAbsent(card.get().uuid(), k -> new ArrayList<>()).add(i.id());
        }
        ids.replaceAll((k, v) -> List.copyOf(v));
        return new CardIndex(Collections.unmodifiableMap(ids), Collections.unmodifiableMap(cards));
    }

    /** The index of a gpu_map rsmapd built from {@code inv}: each card's id is its gpu_id ({@link GpuMap#id}). */
    static CardIndex built(Inventory inv, GpuSettings settings) {
        Map<String, List<String>> ids = new LinkedHashMap<>();
        Map<String, String> cards = new LinkedHashMap<>();
        for (Gpu g : inv.gpus()) {
            String id = GpuMap.id(g, settings.id());
            cards.putIfAbsent(id, g.uuid());
            ids.put(g.uuid(), List.of(id));
        }
        return new CardIndex(Collections.unmodifiableMap(ids), Collections.unmodifiableMap(cards));
    }

    private static Optional<Gpu> cardOf(Instance i, Inventory inv, GpuSettings settings) {
        if (i.characteristics().get(DeviceList.CHARACTERISTIC).isPresent()) { // a device list says which card, or none
            Optional<Integer> minor = GpuMap.minor(i, settings.devDir());
            return minor.flatMap(m -> inv.gpus().stream().filter(g -> g.minor() == m).findFirst());
        }
        return inv.gpus().stream().filter(g -> i.id().equals(g.uuid()) || i.id().equals(GpuMap.id(g, settings.id())))
                .findFirst();
    }

    /** The gpu_map ids of card {@code uuid}, in configured order, each once; empty for a card the map has not. */
    public List<String> ids(String uuid) {
        return idsByCard.getOrDefault(uuid, List.of());
    }

    /** The UUID of the card behind gpu_map id {@code id}, if it is a card's. */
    public Optional<String> card(String id) {
        return Optional.ofNullable(cardById.get(id));
    }

    /** The UUIDs of the cards behind {@code ids}, each once, in their order (a job's cards, for gpu_env). */
    public List<String> uuids(List<String> ids) {
        LinkedHashSet<String> out = new LinkedHashSet<>();
        ids.forEach(id -> card(id).ifPresent(out::add));
        return List.copyOf(out);
    }
}
