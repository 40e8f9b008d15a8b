// The exclusions that make a card one pool when rsmapd makes its slices on demand (docs/gpus.md,
// "Partitions on demand"): a card's whole-card instances and its slots exclude each other, overlapping slots
// exclude each other, and what an admin's slice takes is blocked.
package rsmap.daemon.devices;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiPredicate;
import java.util.function.Function;
import rsmap.alloc.Exclusions;
import rsmap.device.nvml.MigCard;
import rsmap.map.ComplexValues;

final class MigExclusions {
    private MigExclusions() {
    }

    /**
     * The cards as one pool each: the whole-card instances of gpu_map ({@code wholeCard}) exclude the card's
     * slots of map {@code m}, overlapping slots exclude each other; slots an admin's slice (one not
     * {@code ours}, or an unfinished one of rsmapd's) occupies are blocked, and so are the card's whole-card
     * instances while it has one. A taint (a failed creation's too: docs/health.md) is the core's: a tainted
     * instance takes its partners out of use through the core, no block here.
     */
    static Exclusions of(String m, List<MigCard> cards, ComplexValues values,
            Function<MigCard, List<Exclusions.Key>> wholeCard, BiPredicate<MigCard, MigCard.Slice> ours) {
        List<Map.Entry<Exclusions.Key, Exclusions.Key>> pairs = new ArrayList<>();
        Map<Exclusions.Key, String> blocked = new HashMap<>();
        List<MigSlot> slots = values.resourceMap(m).map(r -> r.instances().stream().map(i -> MigSlot.parse(i.id()))
                .flatMap(Optional::stream).distinct().toList()).orElse(List.of());
        for (MigCard c : cards) {
            List<MigSlot> mine = slots.stream().filter(s -> s.card() == c.index()).toList();
            List<Exclusions.Key> whole = wholeCard.apply(c);
            List<MigCard.Slice> foreign = c.slices().stream().filter(x -> !ours.test(c, x)).toList();
            for (int a = 0; a < mine.size(); a++) {
                Exclusions.Key ka = new Exclusions.Key(m, mine.get(a).toString());
                MigCard.Placement pa = placement(c, mine.get(a));
                whole.forEach(w -> pairs.add(Map.entry(w, ka)));
                for (int b = a + 1; b < mine.size(); b++) {
                    if (pa.overlaps(placement(c, mine.get(b)))) {
                        pairs.add(Map.entry(ka, new Exclusions.Key(m, mine.get(b).toString())));
                    }
                }
                for (MigCard.Slice x : foreign) {
                    if (pa.overlaps(x.placement())) {
                        blocked.put(ka, "occupied by slice gi " + x.gi() + " (" + x.profile() + ") that rsmapd did not create");
                    }
                }
            }
            for (Exclusions.Key w : whole) {
                if (!foreign.isEmpty()) {
                    blocked.put(w, "card " + c.uuid() + " has slices rsmapd did not create");
                }
            }
        }
        return Exclusions.of(pairs, blocked);
    }

    /** Where slot {@code s} sits on {@code c} (its profile's placement at its start; one slice wide if unknown). */
    private static MigCard.Placement placement(MigCard c, MigSlot s) {
        return c.profile(s.profile()).flatMap(p -> p.placements().stream().filter(x -> x.start() == s.start()).findFirst())
                .orElse(new MigCard.Placement(s.start(), 1));
    }
}
