// Tainted instances (docs/health.md) are never granted: random starts, ends, reallocation-free taints and
// untaints on hosts with shared cards, checked after every step; a refused taint changes nothing.
package rsmap.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import rsmap.Fixtures;
import rsmap.ParseException;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;

class TaintPropertyTest {
    private static final long SEED = Long.getLong("rsmap.seed", 24L);
    private static final String[] REQUESTS = {"gpu=1", "gpu=2", "gpu=4[same=id]", "gpu=2[same=id]",
        "gpu=2[same=numa_node]", "gpu=1[id=0|a]", "nic=1", "gpu=1,nic=1"};
    private static final String[] GPU_IDS = {"0", "1", "a", "b"};

    private static JobSpec job(String id, String request) throws ParseException {
        return new JobSpec(id, RequestList.parse(request, Fixtures.TABLE), Map.of("node00", 1), "node00",
                JobSpec.UNLIMITED, Optional.empty(), false);
    }

    @Test
    void grants_neverTakeATaintedIdentifier_andUntaintLetsWaitingJobsStart() throws ParseException {
        Random rnd = new Random(SEED);
        for (int run = 0; run < 30; run++) {
            Cluster c = new Cluster(Fixtures.TABLE);
            c.configure("node00", ComplexValues.parse("gpu=8(0[numa_node=0] 0[numa_node=0] 1[numa_node=1] "
                    + "1[numa_node=1] a a b b),nic=3(ib0 ib1 ib2)", Fixtures.TABLE), 0);
            Set<String> tainted = new HashSet<>();
            List<String> running = new ArrayList<>();
            long time = 0;
            for (int step = 0; step < 80; step++) {
                String context = "seed " + SEED + " run " + run + " step " + step;
                time += rnd.nextInt(3);
                int what = rnd.nextInt(6);
                List<Decision.Started> started = new ArrayList<>();
                if (what == 0) {
                    String id = GPU_IDS[rnd.nextInt(GPU_IDS.length)];
                    assertThat(c.taint("node00", "gpu", id, "check: step " + step, time).isRefused()).as(context).isFalse();
                    tainted.add(id);
                } else if (what == 1) {
                    String id = GPU_IDS[rnd.nextInt(GPU_IDS.length)];
                    Decision d = c.untaint("node00", "gpu", id, time);
                    tainted.remove(id);
                    started.addAll(d.started());
                } else if (what == 2 && !running.isEmpty()) {
                    String j = running.remove(rnd.nextInt(running.size()));
                    started.addAll(c.finish(j, time).started());
                } else if (what == 3) {
                    String before = c.dump();
                    Decision d = c.taint("node00", "gpu", "no-such-card", "x", time);
                    assertThat(d.isRefused()).as(context).isTrue();
                    assertThat(c.dump()).as(context).isEqualTo(before);
                } else {
                    Decision d = c.submit(job("j" + step, REQUESTS[rnd.nextInt(REQUESTS.length)]), time);
                    if (d.result() == Decision.Result.GRANTED) {
                        assertThat(d.grant().toString()).as(context).isNotNull();
                        for (String id : c.grantOf("j" + step).orElseThrow().byHost().getOrDefault("node00", Map.of())
                                .getOrDefault("gpu", List.of())) {
                            assertThat(tainted).as(context + ": granted " + id).doesNotContain(id);
                        }
                        running.add("j" + step);
                    }
                    started.addAll(d.started());
                }
                for (Decision.Started s : started) {
                    for (String id : s.grant().byHost().getOrDefault("node00", Map.of()).getOrDefault("gpu", List.of())) {
                        assertThat(tainted).as(context + ": started " + s.job() + " on " + id).doesNotContain(id);
                    }
                    running.add(s.job());
                }
                assertThat(c.taints("node00", "gpu").keySet()).as(context).isEqualTo(tainted);
            }
        }
    }
}
