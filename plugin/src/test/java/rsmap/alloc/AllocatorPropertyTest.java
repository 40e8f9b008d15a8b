// Property test of the allocation core: random hosts, requests, reservations and finish orders, with
// the invariants of the allocation core checked after every step.
package rsmap.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
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
import rsmap.request.ResourceRequest;
import rsmap.request.Scope;

class AllocatorPropertyTest {
    private static final long SEED = Long.getLong("rsmap.seed", 3L);
    private static final int RUNS = 60;
    private static final int STEPS = 150;
    private static final String[] HOST_VALUES = {
        "gpu=8(0[numa_node=0] 0[numa_node=0] 0[numa_node=0] 0[numa_node=0] 1[numa_node=1] 1[numa_node=1]"
                + " 1[numa_node=1] 1[numa_node=1]),nic=4(ib0[numa_node=0,memory=1G] ib1[numa_node=1,memory=2G] ib2 ib3)",
        "gpu=6(a a b b c[numa_node=1] c[numa_node=1]),nic=2(ib0 ib1)",
        "gpu=4(0 0 1 1),nic=3(ib0[memory=4G] ib1[memory=1G] ib2[memory=2G])"};
    private static final String[] REQUESTS = {
        "gpu=1", "gpu=2", "gpu=4[same=id]", "gpu=1[same=id]", "gpu=2[same=numa_node]", "gpu=1[id=0|a]",
        "gpu=2[same=id,scope=job]", "gpu=1[same=numa_node,scope=job]", "nic=1", "nic=1[memory=2G]",
        "nic=2[same=numa_node]", "gpu=1,nic=1", "gpu=2[id=!1],lic=1", "lic=2", "lic=1[same=id]"};

    @Test
    void randomOperations_keepEveryInvariant_andFinishingAllReturnsToEmpty() throws ParseException {
        Random rnd = new Random(SEED);
        for (int run = 0; run < RUNS; run++) {
            Cluster c = new Cluster(Fixtures.TABLE);
            int hosts = 1 + rnd.nextInt(3);
            List<String> names = new ArrayList<>();
            for (int h = 0; h < hosts; h++) {
                String name = "node0" + h;
                names.add(name);
                c.configure(name, ComplexValues.parse(HOST_VALUES[rnd.nextInt(HOST_VALUES.length)], Fixtures.TABLE), 0);
            }
            c.configure(Cluster.GLOBAL, ComplexValues.parse("lic=3(la lb lc)", Fixtures.TABLE), 0);
            long time = 0;
            int jobs = 0;
            for (int step = 0; step < STEPS; step++) {
                time += rnd.nextInt(3) == 0 ? rnd.nextInt(50) : 0;
                String before = c.dump();
                Decision d;
                int what = rnd.nextInt(10);
                String context = "seed " + SEED + " run " + run + " step " + step;
                if (what < 5) {
                    d = c.submit(randomJob(rnd, "j" + jobs++, names, c), time);
                } else if (what < 8) {
                    List<String> all = new ArrayList<>(c.running().keySet());
                    all.addAll(c.queue());
                    String victim = all.isEmpty() ? "none" : all.get(rnd.nextInt(all.size()));
                    d = c.finish(victim, time);
                } else if (what < 9) {
                    long start = time + rnd.nextInt(100);
                    d = c.reserve(new ReservationSpec("r" + step, RequestList.parse(REQUESTS[rnd.nextInt(9)], Fixtures.TABLE),
                            Map.of(names.get(rnd.nextInt(names.size())), 1), start, start + 1 + rnd.nextInt(200)), time);
                } else {
                    d = c.submit(randomJob(rnd, "j0", names, c), time - (time > 0 ? 1 : 0) - 1000); // refused
                }
                if (d.isRefused()) {
                    assertThat(c.dump()).as(context + ": a refusal changed the state").isEqualTo(before);
                }
                checkInvariants(c, context);
            }
            // Finishing every job, running or waiting, returns the state to empty.
            for (int guard = 0; guard < 10_000 && (!c.running().isEmpty() || !c.queue().isEmpty()); guard++) {
                String victim = !c.running().isEmpty() ? c.running().keySet().iterator().next() : c.queue().get(0);
                c.finish(victim, time);
                checkInvariants(c, "draining");
            }
            assertThat(c.running()).isEmpty();
            assertThat(c.queue()).isEmpty();
            for (Map<String, Pool> ps : c.configured().pools().values()) {
                for (Pool p : ps.values()) {
                    assertThat(p.heldBy).containsOnlyNulls();
                    assertThat(p.holds).noneMatch(h -> h.kind() == Hold.Kind.JOB);
                }
            }
        }
    }

    /**
     * A daemon's journal keeps grants, not decisions: restoring the running jobs' grants into a fresh
     * cluster, in any order and whatever ended in between, gives back exactly the same grants; restoring
     * onto a held instance is refused and changes nothing.
     */
    @Test
    void restoringGrants_givesBackTheSameHolders_andNeverDoublesAnInstance() throws ParseException {
        Random rnd = new Random(SEED + 1);
        for (int run = 0; run < RUNS; run++) {
            Cluster c = new Cluster(Fixtures.TABLE);
            ComplexValues values = ComplexValues.parse(HOST_VALUES[rnd.nextInt(HOST_VALUES.length)], Fixtures.TABLE);
            c.configure("node00", values, 0);
            for (int step = 0; step < 80; step++) {
                if (rnd.nextInt(3) > 0) {
                    c.submit(new JobSpec("j" + step, RequestList.parse(REQUESTS[rnd.nextInt(12)], Fixtures.TABLE),
                            Map.of("node00", 1), "node00", JobSpec.UNLIMITED, Optional.empty(), false), 0);
                } else if (!c.running().isEmpty()) {
                    List<String> all = new ArrayList<>(c.running().keySet());
                    c.finish(all.get(rnd.nextInt(all.size())), 0);
                }
            }
            new ArrayList<>(c.queue()).forEach(j -> c.finish(j, 0));
            Cluster fresh = new Cluster(Fixtures.TABLE);
            fresh.configure("node00", values, 0);
            List<String> order = new ArrayList<>(c.running().keySet());
            java.util.Collections.shuffle(order, rnd);
            for (String id : order) {
                Decision d = fresh.restore(c.running().get(id).spec(), c.grantOf(id).orElseThrow(), 0);
                assertThat(d.isRefused()).as("run %d restore %s: %s", run, id, d.error()).isFalse();
            }
            for (String id : order) {
                assertThat(fresh.grantOf(id)).as("run %d job %s", run, id).isEqualTo(c.grantOf(id));
            }
            checkInvariants(fresh, "restored run " + run);
            if (!order.isEmpty()) {
                String id = order.get(0);
                assertThat(fresh.restore(c.running().get(id).spec(), c.grantOf(id).orElseThrow(), 0).error())
                        .contains("exists");
            }
        }
    }

    @Test
    void restore_refusesHeldGoneAndUnknownInstances_changingNothing() throws ParseException {
        Cluster c = new Cluster(Fixtures.TABLE);
        c.configure("node00", ComplexValues.parse("gpu=2(a a)", Fixtures.TABLE), 0);
        JobSpec one = new JobSpec("j1", RequestList.parse("gpu=2", Fixtures.TABLE), Map.of("node00", 1), "node00",
                JobSpec.UNLIMITED, Optional.empty(), false);
        JobSpec two = new JobSpec("j2", RequestList.parse("gpu=1", Fixtures.TABLE), Map.of("node00", 1), "node00",
                JobSpec.UNLIMITED, Optional.empty(), false);
        assertThat(c.restore(one, new Grant(Map.of("node00", Map.of("gpu", List.of("a", "a")))), 0).isRefused()).isFalse();
        String before = c.dump();
        assertThat(c.restore(two, new Grant(Map.of("node00", Map.of("gpu", List.of("a")))), 0).error())
                .isEqualTo("node00/gpu has no free instance a for job j2");
        assertThat(c.restore(two, new Grant(Map.of("node00", Map.of("nic", List.of("ib0")))), 0).error())
                .isEqualTo("host node00 has no map nic any more");
        assertThat(c.dump()).isEqualTo(before);
        c.finish("j1", 0);
        assertThat(c.restore(two, new Grant(Map.of("node00", Map.of("gpu", List.of("b")))), 0).error())
                .isEqualTo("node00/gpu has no free instance b for job j2");
    }

    private static JobSpec randomJob(Random rnd, String id, List<String> names, Cluster c) throws ParseException {
        Map<String, Integer> hosts = new LinkedHashMap<>();
        int n = 1 + rnd.nextInt(names.size());
        List<String> shuffled = new ArrayList<>(names);
        java.util.Collections.shuffle(shuffled, rnd);
        for (int i = 0; i < n; i++) {
            hosts.put(shuffled.get(i), 1 + rnd.nextInt(2));
        }
        String master = hosts.keySet().iterator().next();
        long runtime = rnd.nextInt(4) == 0 ? JobSpec.UNLIMITED : 1 + rnd.nextInt(300);
        Optional<String> ar = Optional.empty();
        if (rnd.nextInt(6) == 0) {
            List<String> ars = new ArrayList<>();
            for (Map<String, Pool> ps : c.configured().pools().values()) {
                for (Pool p : ps.values()) {
                    p.holds.stream().filter(h -> h.kind() == Hold.Kind.AR).forEach(h -> ars.add(h.owner()));
                }
            }
            if (!ars.isEmpty()) {
                ar = Optional.of(ars.get(rnd.nextInt(ars.size())));
            }
        }
        return new JobSpec(id, RequestList.parse(REQUESTS[rnd.nextInt(REQUESTS.length)], Fixtures.TABLE), hosts, master,
                runtime, ar, rnd.nextBoolean());
    }

    /** The invariants of the allocation core, checked on the whole state. */
    static void checkInvariants(Cluster c, String context) {
        Map<Pool, Set<Integer>> held = new HashMap<>();
        for (Running r : c.running().values()) {
            for (Map.Entry<Pool, int[]> e : r.picks().entrySet()) {
                Pool p = e.getKey();
                for (int i : e.getValue()) {
                    // no instance is ever granted beyond its count: one holder per instance
                    assertThat(held.computeIfAbsent(p, k -> new HashSet<>()).add(i)).as(context + ": doubly granted").isTrue();
                    assertThat(p.heldBy[i]).as(context).isEqualTo(r.spec().id());
                }
            }
            for (ResourceRequest req : r.spec().request().resourceRequests()) {
                Set<Object> jobKeys = new HashSet<>();
                int granted = 0;
                for (Map.Entry<Pool, int[]> e : r.picks().entrySet()) {
                    if (!e.getKey().name().equals(req.name())) {
                        continue;
                    }
                    Set<Object> keys = new HashSet<>();
                    for (int i : e.getValue()) {
                        granted++;
                        // filters always hold
                        assertThat(req.admits(e.getKey().instances[i])).as(context + ": filter violated").isTrue();
                        req.same().ifPresent(s -> {
                            Optional<Object> k = s.groupOf(e.getKey().instances[i]);
                            assertThat(k).as(context + ": instance without " + s).isPresent();
                            keys.add(k.get());
                            jobKeys.add(k.get());
                        });
                    }
                    if (req.same().isPresent()) {
                        assertThat(keys).as(context + ": same= disagrees on a host").hasSizeLessThanOrEqualTo(1);
                    }
                }
                if (req.same().isPresent() && req.effectiveScope() == Scope.JOB) {
                    assertThat(jobKeys).as(context + ": scope=job disagrees").hasSizeLessThanOrEqualTo(1);
                }
                assertThat(granted).as(context + ": amount").isPositive();
            }
            // reserved instances are never granted outside their reservation
            long end = r.spec().endAt(r.start());
            for (Map.Entry<Pool, int[]> e : r.picks().entrySet()) {
                for (Hold h : e.getKey().holds) {
                    if (h.kind() != Hold.Kind.AR) {
                        continue;
                    }
                    boolean inside = r.spec().ar().map(h.owner()::equals).orElse(false);
                    if (!inside && h.overlaps(r.start(), end)) {
                        for (int i : e.getValue()) {
                            assertThat(h.covers(i)).as(context + ": AR instance granted outside it").isFalse();
                        }
                    }
                    if (inside) {
                        for (int i : e.getValue()) {
                            assertThat(h.covers(i)).as(context + ": job in AR granted outside its set").isTrue();
                        }
                    }
                }
            }
        }
        for (Map<String, Pool> ps : c.configured().pools().values()) {
            for (Pool p : ps.values()) {
                for (int i = 0; i < p.size(); i++) {
                    boolean mine = held.getOrDefault(p, Set.of()).contains(i);
                    assertThat(p.heldBy[i] != null).as(context + ": orphan hold").isEqualTo(mine);
                }
            }
        }
    }

    @Test
    void sameScript_twice_decidesTheSame() throws ParseException {
        for (int k = 0; k < 2; k++) {
            Random a = new Random(SEED + 7);
            Random b = new Random(SEED + 7);
            assertThat(trace(a)).isEqualTo(trace(b));
        }
    }

    private static List<String> trace(Random rnd) throws ParseException {
        Cluster c = new Cluster(Fixtures.TABLE);
        c.configure("node00", ComplexValues.parse(HOST_VALUES[0], Fixtures.TABLE), 0);
        c.configure(Cluster.GLOBAL, ComplexValues.parse("lic=3(la lb lc)", Fixtures.TABLE), 0);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            Decision d = rnd.nextInt(3) == 0 && !c.running().isEmpty()
                    ? c.finish(c.running().keySet().iterator().next(), i)
                    : c.submit(randomJob(rnd, "j" + i, List.of("node00"), c), i);
            out.add(d.toString());
        }
        return out;
    }
}
