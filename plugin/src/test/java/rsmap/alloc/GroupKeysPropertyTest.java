// A scope=job request held to a group chosen for the whole job (GroupKeys): Grid Engine's RSMAP manual,
// "How far the agreement reaches": "The group is chosen once for the whole job ... and every host is
// then held to it." Seeded random clusters; the seed is printed with every failure.
package rsmap.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import rsmap.Fixtures;
import rsmap.ParseException;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;

class GroupKeysPropertyTest {
    private static final long SEED = Long.getLong("rsmap.seed", 27L);
    /** Requests that span the job, and one that does not (pins never reach it). */
    private static final String[] REQUESTS = {"gpu=1[same=id,scope=job]", "gpu=2[same=id,scope=job]",
        "gpu=3[same=id,scope=job]", "gpu=2[same=numa_node,scope=job]", "gpu=2[id=!c,same=id,scope=job]",
        "gpu=1[same=numa_node,scope=job],nic=1"};
    private static final String[] IDS = {"a", "b", "c", "d"};

    /** node00 with random shares of a..d, each identifier on a random NUMA node, and two nics. */
    private static Cluster cluster(Random rnd, List<String[]> layout) throws ParseException {
        StringBuilder inst = new StringBuilder();
        int n = 0;
        for (String id : IDS) {
            int numa = rnd.nextInt(2);
            for (int s = 1 + rnd.nextInt(4); s > 0; s--, n++) {
                inst.append(inst.length() == 0 ? "" : " ").append(id).append("[numa_node=").append(numa).append(']');
                layout.add(new String[] {id, Integer.toString(numa)});
            }
        }
        Cluster c = new Cluster(Fixtures.TABLE);
        c.configure("node00", ComplexValues.parse("gpu=" + n + "(" + inst + "),nic=2(ib0 ib1)", Fixtures.TABLE), 0);
        return c;
    }

    private static JobSpec job(String id, String request) throws ParseException {
        return new JobSpec(id, RequestList.parse(request, Fixtures.TABLE), Map.of("node00", 1), "node00",
                JobSpec.UNLIMITED, Optional.empty(), false);
    }

    /** The oracle: free gpu instances whose identifier (same=id) or NUMA node (same=numa_node) is {@code key}. */
    private static long freeIn(Cluster c, List<String[]> layout, String request, String key) {
        boolean byId = request.contains("same=id");
        boolean notC = request.contains("id=!c");
        List<Map.Entry<String, String>> held = c.instances("node00").get("gpu");
        long free = 0;
        for (int i = 0; i < layout.size(); i++) {
            String[] l = layout.get(i);
            if (held.get(i).getValue().isEmpty() && (byId ? l[0] : l[1]).equals(key) && !(notC && l[0].equals("c"))) {
                free++;
            }
        }
        return free;
    }

    @Test
    void aPinnedRequest_takesOnlyItsGroup_orNothing_andThePinOfAnOwnChoiceChangesNothing() throws ParseException {
        Random rnd = new Random(SEED);
        int granted = 0;
        int refused = 0;
        for (int run = 0; run < 60; run++) {
            List<String[]> layout = new ArrayList<>();
            Cluster c = cluster(rnd, layout);
            for (int step = 0; step < 40; step++) {
                String context = "seed " + SEED + " run " + run + " step " + step;
                if (!c.runningJobs().isEmpty() && rnd.nextInt(3) == 0) {
                    List<String> running = c.runningJobs();
                    c.finish(running.get(rnd.nextInt(running.size())), 0);
                    continue;
                }
                String request = REQUESTS[rnd.nextInt(REQUESTS.length)];
                String map = "gpu";
                String key = request.contains("numa_node") ? Integer.toString(rnd.nextInt(3))
                        : rnd.nextInt(8) == 0 ? "zz" : IDS[rnd.nextInt(IDS.length)];
                JobSpec free = job("j" + run + "." + step, request);
                JobSpec pinned = free.withKeys(new GroupKeys(Map.of(map, key)));

                // The pin of the group the job would choose on its own: exactly its own grant.
                Cluster own = c.copy();
                Decision d = own.grantNow(free, 0);
                if (d.result() == Decision.Result.GRANTED) {
                    GroupKeys chosen = own.groupKeys(free.id());
                    assertThat(chosen.byMap()).as(context).containsOnlyKeys(map);
                    Cluster again = c.copy();
                    Decision p = again.grantNow(free.withKeys(chosen), 0);
                    assertThat(p.grant()).as(context).isEqualTo(d.grant());
                    assertThat(again.dump()).as(context).isEqualTo(own.dump());
                }

                // A pinned start: granted exactly when its group has enough free matching instances here.
                long enough = request.startsWith("gpu=3") ? 3 : request.startsWith("gpu=2") ? 2 : 1;
                boolean fits = freeIn(c, layout, request, key) >= enough
                        && (!request.contains("nic") || c.instances("node00").get("nic").stream()
                        .anyMatch(e -> e.getValue().isEmpty()));
                String before = c.dump();
                Decision p = c.grantNow(pinned, 0);
                assertThat(p.result()).as(context + " " + request + " pinned to " + key)
                        .isEqualTo(fits ? Decision.Result.GRANTED : Decision.Result.NOT_NOW);
                if (!fits) {
                    refused++;
                    assertThat(c.dump()).as(context + ": a refused pin changes nothing").isEqualTo(before);
                    if (freeIn(c, layout, request, key) < enough) {
                        assertThat(p.error()).as(context).contains("the job's group").contains(key)
                                .contains("chosen once for the whole job");
                    }
                    continue;
                }
                granted++;
                assertThat(c.groupKeys(pinned.id()).byMap()).as(context).isEqualTo(Map.of(map, key));
                List<String> ids = p.grant().byHost().get("node00").get(map);
                assertThat(ids).as(context).hasSize((int) enough);
                if (request.contains("same=id")) {
                    assertThat(ids).as(context + ": every instance of the job's group").containsOnly(key);
                }
            }
        }
        assertThat(granted).as("both outcomes are exercised").isGreaterThan(100);
        assertThat(refused).isGreaterThan(100);
    }

    /** Rows: configured values, request, pin, granted identifiers (empty: not now). */
    private static final String[][] TABLE = {
        // A characteristic's value is compared by meaning: 81920M names the group of 80G.
        {"gpu=4(a[memory=80G] a[memory=80G] b[memory=40G] b[memory=40G])", "gpu=2[same=memory,scope=job]", "81920M", "a a"},
        {"gpu=4(a[memory=80G] a[memory=80G] b[memory=40G] b[memory=40G])", "gpu=2[same=memory,scope=job]", "40G", "b b"},
        // A pin that is no value of the characteristic's type names no group.
        {"gpu=4(a[memory=80G] a[memory=80G] b[memory=40G] b[memory=40G])", "gpu=2[same=memory,scope=job]", "many", ""},
        // Best fit alone would take b (the smaller group); the pin holds the job to a.
        {"gpu=5(a a a b b)", "gpu=2[same=id,scope=job]", "a", "a a"},
        {"gpu=5(a a a b b)", "gpu=2[same=id,scope=job]", "b", "b b"},
        {"gpu=5(a a a b b)", "gpu=3[same=id,scope=job]", "b", ""},
        // scope=host is not held to the job's group: the pin is ignored, best fit decides.
        {"gpu=5(a a a b b)", "gpu=2[same=id,scope=host]", "a", "b b"},
        {"gpu=5(a a a b b)", "gpu=2[same=id]", "a", "b b"},
    };

    @Test
    void pinnedRequests_tableOfGroups() throws ParseException {
        for (String[] row : TABLE) {
            Cluster c = new Cluster(Fixtures.TABLE);
            c.configure("node00", ComplexValues.parse(row[0], Fixtures.TABLE), 0);
            Decision d = c.grantNow(job("7", row[1]).withKeys(new GroupKeys(Map.of("gpu", row[2]))), 0);
            String got = d.result() == Decision.Result.GRANTED
                    ? String.join(" ", d.grant().byHost().get("node00").get("gpu")) : "";
            assertThat(got).as(String.join(" | ", row)).isEqualTo(row[3]);
        }
    }
}
