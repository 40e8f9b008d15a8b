// Property: whatever jobs start and end, no two instances that exclude each other (a card and its MIG
// slices, overlapping slices) are ever held at once, and a blocked one is never held. Seeded; the seed is
// printed on failure.
package rsmap.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import rsmap.Fixtures;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;

class ExclusionsPropertyTest {
    private static final long SEED = Long.getLong("rsmap.seed", 26L);
    private static final String HOST = "node00";
    /** An A100's placements: profile slices, memory-slice size, starts. */
    private static final int[][] PROFILES = {{1, 1, 0, 1, 2, 3, 4, 5, 6}, {2, 2, 0, 2, 4}, {3, 4, 0, 4}, {7, 8, 0}};
    private static final String[] REQUESTS = {"nic=1", "nic=2", "gpu=1", "gpu=1,nic=1", "nic=1[id=0:3@4]",
        "nic=3", "gpu=2"};

    private record Slot(int card, int slices, int start, int size) {
        String id() {
            return card + ":" + slices + "@" + start;
        }
    }

    @Test
    void randomStartsAndEnds_neverHoldTwoPartnersOrABlockedOne() throws Exception {
        Random r = new Random(SEED);
        List<Slot> slots = new ArrayList<>();
        for (int card = 0; card < 2; card++) {
            for (int[] p : PROFILES) {
                for (int k = 2; k < p.length; k++) {
                    slots.add(new Slot(card, p[0], p[k], p[1]));
                }
            }
        }
        List<Map.Entry<Exclusions.Key, Exclusions.Key>> pairs = new ArrayList<>();
        for (Slot a : slots) {
            pairs.add(Map.entry(new Exclusions.Key("gpu", Integer.toString(a.card())), new Exclusions.Key("nic", a.id())));
            for (Slot b : slots) {
                if (a != b && a.card() == b.card() && a.start() < b.start() + b.size() && b.start() < a.start() + a.size()) {
                    pairs.add(Map.entry(new Exclusions.Key("nic", a.id()), new Exclusions.Key("nic", b.id())));
                }
            }
        }
        Exclusions.Key blockedKey = new Exclusions.Key("nic", "1:1@6"); // an admin's slice on card 1
        Exclusions x = Exclusions.of(pairs, Map.of(blockedKey, "an admin's"));
        Cluster c = new Cluster(Fixtures.TABLE);
        c.setExclusionRule((h, v) -> x);
        StringBuilder nic = new StringBuilder();
        slots.forEach(s -> nic.append(nic.length() == 0 ? "" : " ").append(s.id()));
        c.configure(HOST, ComplexValues.parse("gpu=2(0 1),nic=" + slots.size() + "(" + nic + ")", Fixtures.TABLE), 0);
        List<String> running = new ArrayList<>();
        int granted = 0;
        for (int step = 0; step < 3000; step++) {
            if (!running.isEmpty() && r.nextInt(3) == 0) {
                c.finish(running.remove(r.nextInt(running.size())), 0);
            } else {
                String job = "j" + step;
                String request = REQUESTS[r.nextInt(REQUESTS.length)];
                Decision d = c.grantNow(new JobSpec(job, RequestList.parse(request, Fixtures.TABLE), Map.of(HOST, 1), HOST,
                        JobSpec.UNLIMITED, Optional.empty(), false), 0);
                if (d.result() == Decision.Result.GRANTED) {
                    running.add(job);
                    granted++;
                }
            }
            Map<Exclusions.Key, String> held = new HashMap<>();
            c.instances(HOST).forEach((map, list) -> list.forEach(e -> {
                if (!e.getValue().isEmpty()) {
                    held.put(new Exclusions.Key(map, e.getKey()), e.getValue());
                }
            }));
            for (Exclusions.Key k : held.keySet()) {
                assertThat(k).as("seed %d, step %d: blocked but held", SEED, step).isNotEqualTo(blockedKey);
                for (Exclusions.Key p : x.partners(k)) {
                    assertThat(held).as("seed %d, step %d: %s and its partner %s both held", SEED, step, k, p)
                            .doesNotContainKey(p);
                }
            }
        }
        assertThat(granted).as("seed %d: the property was exercised", SEED).isGreaterThan(300);
    }
}
