// Cluster.grantNow: the job-start path's immediate decision, checked against what the daemon does today
// (submit, and when WAITING: explain, withdraw, and say why).
package rsmap.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import rsmap.Fixtures;
import rsmap.ParseException;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;

class GrantNowTest {
    private static final long SEED = Long.getLong("rsmap.seed", 5L);
    private static final String[] REQUESTS = {
        "gpu=1", "gpu=2", "gpu=4[same=id]", "gpu=2[same=numa_node]", "gpu=1[id=0|a]", "nic=1", "nic=2[same=numa_node]",
        "gpu=1,nic=1", "gpu=2[id=!1],lic=1", "lic=2", "lic=1[same=id]", "gpu=1,lic=1,nic=1"};

    private static Cluster cluster(String... hostValues) throws ParseException {
        Cluster c = new Cluster(Fixtures.TABLE);
        for (int h = 0; h < hostValues.length; h++) {
            c.configure("node0" + h, ComplexValues.parse(hostValues[h], Fixtures.TABLE), 0);
        }
        c.configure(Cluster.GLOBAL, ComplexValues.parse("lic=3(la lb lc)", Fixtures.TABLE), 0);
        return c;
    }

    private static JobSpec job(String id, String request, Map<String, Integer> hosts) throws ParseException {
        return new JobSpec(id, RequestList.parse(request, Fixtures.TABLE), hosts, hosts.keySet().iterator().next(),
                JobSpec.UNLIMITED, Optional.empty(), false);
    }

    /** The text the daemon builds today from explain after a WAITING submit (Daemon.jobStart). */
    private static String daemonWhy(Cluster afterSubmit, JobSpec spec, String host) {
        StringBuilder why = new StringBuilder();
        afterSubmit.explain(spec.request(), host).maps().stream().filter(m -> !m.canStart())
                .forEach(m -> why.append(why.length() > 0 ? "; " : "").append(m.map()).append(": ").append(m.verdict()));
        return why.toString();
    }

    @Test
    void grantNow_decidesAsSubmit_andInsteadOfWaitingSaysWhyChangingNothingButTheTime() throws ParseException {
        Random rnd = new Random(SEED);
        for (int run = 0; run < 40; run++) {
            Cluster c = cluster("gpu=8(0[numa_node=0] 0[numa_node=0] 1[numa_node=1] 1[numa_node=1] a a b b),nic=3(ib0 ib1 ib2)",
                    "gpu=4(0 0 1 1),nic=2(ib0 ib1)");
            long time = 0;
            for (int step = 0; step < 60; step++) {
                String context = "seed " + SEED + " run " + run + " step " + step;
                time += rnd.nextInt(4) == 0 ? rnd.nextInt(20) : 0;
                Map<String, Integer> hosts = new LinkedHashMap<>();
                hosts.put("node0" + rnd.nextInt(2), 1 + rnd.nextInt(2));
                if (rnd.nextInt(4) == 0) {
                    hosts.put("node00", 1);
                }
                JobSpec spec = job("j" + step, REQUESTS[rnd.nextInt(REQUESTS.length)], hosts);
                Cluster submitted = c.copy();
                Cluster now = c.copy();
                Cluster advanced = c.copy();
                Decision s = submitted.submit(spec, time);
                Decision g = now.grantNow(spec, time);
                assertThat(g.started()).as(context).isEqualTo(s.started());
                switch (s.result()) {
                    case GRANTED:
                        assertThat(g.result()).as(context).isEqualTo(Decision.Result.GRANTED);
                        assertThat(g.grant()).as(context).isEqualTo(s.grant());
                        assertThat(now.dump()).as(context).isEqualTo(submitted.dump());
                        break;
                    case WAITING:
                        assertThat(g.result()).as(context).isEqualTo(Decision.Result.NOT_NOW);
                        if (hosts.size() == 1) {
                            assertThat(g.error()).as(context).isEqualTo(daemonWhy(submitted, spec, hosts.keySet().iterator().next()));
                        }
                        advanced.advance(time);
                        assertThat(now.dump()).as(context + ": not now changed more than the time").isEqualTo(advanced.dump());
                        assertThat(now.isWaiting(spec.id()) || now.isRunning(spec.id())).as(context).isFalse();
                        break;
                    default:
                        assertThat(g.result()).as(context).isEqualTo(s.result());
                        assertThat(g.error()).as(context).isEqualTo(s.error());
                }
                // Move the real state on: mostly starts, some ends.
                if (rnd.nextInt(3) == 0 && !c.runningJobs().isEmpty()) {
                    List<String> all = new ArrayList<>(c.runningJobs());
                    c.finish(all.get(rnd.nextInt(all.size())), time);
                } else {
                    c.grantNow(spec, time);
                }
                assertThat(c.queue()).as(context).isEmpty();
                checkStates(c, context);
            }
        }
    }

    /** Pool's instance states follow its holders: HELD exactly where a running job holds the instance. */
    static void checkStates(Cluster c, String context) {
        for (Map<String, Pool> ps : c.configured().pools().values()) {
            for (Pool p : ps.values()) {
                for (int i = 0; i < p.size(); i++) {
                    assertThat(p.states[i]).as(context).isEqualTo(p.heldBy[i] == null ? InstanceState.FREE : InstanceState.HELD);
                }
            }
        }
    }

    @Test
    void grantNow_busyMap_isNotNow_withTheDaemonsWhy_andTheJobCanAskAgain() throws ParseException {
        Cluster c = cluster("gpu=2(0 1),nic=1(ib0)");
        assertThat(c.grantNow(job("a", "gpu=2", Map.of("node00", 1)), 0).result()).isEqualTo(Decision.Result.GRANTED);
        Decision d = c.grantNow(job("b", "gpu=1,nic=1", Map.of("node00", 1)), 5);
        assertThat(d.result()).isEqualTo(Decision.Result.NOT_NOW);
        assertThat(d.isRefused()).isFalse();
        assertThat(d.error()).isEqualTo("gpu: needs 1 free matching instance, 0 available");
        assertThat(d.grant()).isEqualTo(Grant.NONE);
        assertThat(c.queue()).isEmpty();
        assertThat(c.now()).isEqualTo(5);
        c.finish("a", 6);
        assertThat(c.grantNow(job("b", "gpu=1,nic=1", Map.of("node00", 1)), 6).grant().byHost())
                .isEqualTo(Map.of("node00", Map.of("gpu", List.of("0"), "nic", List.of("ib0"))));
    }

    @Test
    void grantNow_globalMapOnTwoHosts_saysItsVerdictOnce() throws ParseException {
        Cluster c = cluster("gpu=1(0)", "gpu=1(0)");
        c.grantNow(job("a", "lic=3", Map.of("node00", 1)), 0);
        Map<String, Integer> both = new LinkedHashMap<>();
        both.put("node00", 1);
        both.put("node01", 1);
        Decision d = c.grantNow(job("b", "lic=1", both), 0);
        assertThat(d.result()).isEqualTo(Decision.Result.NOT_NOW);
        assertThat(d.error()).isEqualTo("lic: needs 1 free matching instance, 0 available");
    }

    @Test
    void grantNow_refusals_areSubmitsRefusals() throws ParseException {
        Cluster c = cluster("gpu=1(0)");
        assertThat(c.grantNow(job("a", "nic=1", Map.of("node00", 1)), 0).error())
                .isEqualTo("host node00 has no resource map nic, and neither has the global host");
        assertThat(c.grantNow(job("a", "gpu=1", Map.of("node09", 1)), 0).error()).isEqualTo("unknown host node09");
        c.grantNow(job("a", "gpu=1", Map.of("node00", 1)), 3);
        assertThat(c.grantNow(job("a", "gpu=1", Map.of("node00", 1)), 3).error()).isEqualTo("job a exists");
        assertThat(c.grantNow(job("b", "gpu=1", Map.of("node00", 1)), 2).error())
                .isEqualTo("time 2 is before the current time 3");
    }

    /** Before the split a waiting job whose map a reconfiguration removed made the next pass fail a cast. */
    @Test
    void configure_takingAWaitingJobsMapAway_leavesItWaiting() throws ParseException {
        Cluster c = cluster("gpu=1(0)");
        assertThat(c.submit(job("big", "gpu=2", Map.of("node00", 1)), 0).result()).isEqualTo(Decision.Result.WAITING);
        assertThat(c.configure("node00", ComplexValues.parse("nic=1(ib0)", Fixtures.TABLE), 1).isRefused()).isFalse();
        assertThat(c.queue()).containsExactly("big");
        assertThat(c.configure("node00", ComplexValues.parse("gpu=2(0 1)", Fixtures.TABLE), 2).started())
                .extracting(Decision.Started::job).containsExactly("big");
    }
}
