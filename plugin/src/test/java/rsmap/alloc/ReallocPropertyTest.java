// Property test of reallocation: random submits, grows, take-aways, releases, cancels and job
// ends, with the invariants checked after every step, and a journal-style restore of every job's state.
package rsmap.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
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
import rsmap.realloc.Answer;
import rsmap.realloc.Event;
import rsmap.realloc.Outcome;
import rsmap.realloc.Policy;
import rsmap.realloc.Realloc;
import rsmap.realloc.Reallocs;
import rsmap.request.RequestList;

class ReallocPropertyTest {
    private static final long SEED = Long.getLong("rsmap.seed", 13L);
    private static final int RUNS = 40;
    private static final int STEPS = 200;
    private static final String HOST = "gpu=8(0[numa_node=0] 0[numa_node=0] 0[numa_node=0] 0[numa_node=0] 1[numa_node=1]"
            + " 1[numa_node=1] 1[numa_node=1] 1[numa_node=1]),nic=4(ib0[numa_node=0] ib1[numa_node=1] ib2 ib3)";
    private static final String[] REQUESTS = {"gpu=1", "gpu=2", "gpu=2[same=id]", "gpu=1[same=id]", "nic=1",
        "gpu=1,nic=1", "gpu=2[same=numa_node]", "lic=1", "gpu=1[id=1]"};
    private static final String[] CHANGES = {"gpu=1", "gpu=2", "gpu=1[same=id]", "gpu=2[same=id]", "nic=1", "lic=1",
        "gpu=1[same=numa_node]", "gpu=9", "nic=1[numa_node=1]"};

    @Test
    void randomReallocs_keepEveryInvariant_andEndingAllReturnsToEmpty() throws ParseException {
        Random rnd = new Random(SEED);
        Map<String, Integer> seen = new java.util.TreeMap<>();
        for (int run = 0; run < RUNS; run++) {
            Cluster c = cluster();
            Reallocs re = new Reallocs(c);
            re.setPolicy(rnd.nextBoolean() ? Policy.FIFO : Policy.SMALLEST);
            long time = 0;
            long lastId = 0;
            for (int step = 0; step < STEPS; step++) {
                String context = "seed " + SEED + " run " + run + " step " + step;
                time += rnd.nextInt(4) == 0 ? rnd.nextInt(20) : 0;
                List<String> jobs = new ArrayList<>(c.running().keySet());
                String job = jobs.isEmpty() ? "j0" : jobs.get(rnd.nextInt(jobs.size()));
                String before = c.dump();
                List<Answer> answers = new ArrayList<>();
                int immediate = 0;
                int what = rnd.nextInt(12);
                if (what < 3) {
                    Decision d = c.submit(new JobSpec("j" + step, parse(REQUESTS[rnd.nextInt(REQUESTS.length)]),
                            Map.of("node00", 1), "node00", rnd.nextBoolean() ? JobSpec.UNLIMITED : 50 + rnd.nextInt(100),
                            Optional.empty(), false), time);
                    collect(re.events(d), answers);
                } else if (what < 7) {
                    Optional<RequestList> add = rnd.nextInt(3) > 0 ? Optional.of(parse(pick(rnd, CHANGES))) : Optional.empty();
                    Optional<RequestList> sub = add.isEmpty() || rnd.nextInt(4) == 0
                            ? Optional.of(parse(pick(rnd, CHANGES))) : Optional.empty();
                    Grant ids = rnd.nextInt(4) == 0 ? some(rnd, c.grantOf(job).orElse(Grant.NONE)) : Grant.NONE;
                    Outcome o = re.realloc(new Realloc(job, "t" + step, add, sub, ids), time);
                    seen.merge(o.answer().map(a -> "at once " + a.type()).orElse("waiting"), 1, Integer::sum);
                    o.answer().ifPresent(answers::add);
                    immediate = answers.size();
                    o.answer().filter(a -> a.type() == Answer.Type.SUCCESS).ifPresent(a -> obeys(c, add, a, context));
                    collect(o.events(), answers);
                } else if (what < 9) {
                    Grant pending = re.releasingOf(job);
                    Grant ids = rnd.nextInt(5) == 0 ? some(rnd, c.grantOf(job).orElse(Grant.NONE)) : some(rnd, pending);
                    Outcome o = re.release(job, ids, time);
                    seen.merge(o.ok() ? "release ok" : "release refused", 1, Integer::sum);
                    if (!o.ok()) {
                        assertThat(c.dump()).as(context + ": a refused release changed the state").isEqualTo(before);
                    }
                    collect(o.events(), answers);
                } else if (what < 10 && !re.waiting().isEmpty()) {
                    Realloc w = re.waiting().get(rnd.nextInt(re.waiting().size())).realloc();
                    Outcome o = re.cancel(w.job(), w.tag());
                    assertThat(o.answer().orElseThrow().type()).isEqualTo(Answer.Type.CANCEL);
                    assertThat(c.dump()).as(context + ": a cancel changed the instances").isEqualTo(before);
                } else if (what < 11) {
                    Outcome o = re.finish(job, time);
                    collect(o.events(), answers);
                    assertThat(re.waiting()).as(context).noneMatch(w -> w.realloc().job().equals(job));
                } else {
                    collect(re.setEnabled(rnd.nextInt(5) > 0), answers);
                }
                answers.stream().skip(immediate)
                        .forEach(a -> seen.merge("later " + a.type(), 1, Integer::sum));
                for (Answer a : answers) {
                    assertThat(a.allocId()).as(context + ": alloc_id increases").isGreaterThan(lastId);
                    lastId = a.allocId();
                }
                checkInvariants(c, re, context);
            }
            for (int guard = 0; guard < 10_000 && (!c.running().isEmpty() || !c.queue().isEmpty()); guard++) {
                re.finish(!c.running().isEmpty() ? c.running().keySet().iterator().next() : c.queue().get(0), time);
                checkInvariants(c, re, "draining run " + run);
            }
            checkInvariants(c, re, "drained run " + run);
            assertThat(re.waiting()).isEmpty();
            for (Map<String, Pool> ps : c.configured().pools().values()) {
                ps.values().forEach(p -> assertThat(p.free()).isEqualTo(p.size()));
            }
        }
        // the random walk reaches every kind of answer (else it tests little)
        assertThat(seen).as(seen.toString()).containsKeys("at once SUCCESS", "at once DENY", "at once UNSUPPORTED",
                "waiting", "later SUCCESS", "later CANCEL", "later UNSUPPORTED", "release ok", "release refused");
    }

    /**
     * A journal keeps each job's grant and its pending take-aways: restoring them into a fresh cluster in
     * any order gives back the same grants, take-aways and environments, and a RELEASE still completes.
     */
    @Test
    void restoringGrantAndPendingTakeAways_givesBackTheSameState_andReleaseCompletes() throws ParseException {
        Random rnd = new Random(SEED + 1);
        for (int run = 0; run < RUNS; run++) {
            Cluster c = cluster();
            Reallocs re = new Reallocs(c);
            for (int step = 0; step < 60; step++) {
                List<String> jobs = new ArrayList<>(c.running().keySet());
                if (jobs.isEmpty() || rnd.nextInt(3) == 0) {
                    c.submit(new JobSpec("j" + step, parse(pick(rnd, REQUESTS)), Map.of("node00", 1), "node00",
                            JobSpec.UNLIMITED, Optional.empty(), false), 0);
                } else {
                    String job = jobs.get(rnd.nextInt(jobs.size()));
                    re.realloc(new Realloc(job, "t" + step, rnd.nextBoolean() ? Optional.of(parse(pick(rnd, CHANGES)))
                            : Optional.empty(), Optional.of(parse(pick(rnd, CHANGES))), Grant.NONE), 0);
                }
            }
            new ArrayList<>(c.queue()).forEach(j -> c.finish(j, 0));
            Cluster fresh = cluster();
            Reallocs back = new Reallocs(fresh);
            List<String> order = new ArrayList<>(c.running().keySet());
            java.util.Collections.shuffle(order, rnd);
            for (String id : order) {
                Outcome o = back.restore(c.running().get(id).spec(), c.grantOf(id).orElseThrow(), re.releasingOf(id), 0);
                assertThat(o.ok()).as("run %d restore %s: %s", run, id, o.error()).isTrue();
            }
            for (String id : order) {
                assertThat(fresh.grantOf(id)).as("run %d job %s", run, id).isEqualTo(c.grantOf(id));
                assertThat(back.releasingOf(id)).as("run %d job %s", run, id).isEqualTo(re.releasingOf(id));
                assertThat(fresh.environment(id, "node00")).isEqualTo(c.environment(id, "node00"));
            }
            checkInvariants(fresh, back, "restored run " + run);
            for (String id : order) {
                Grant pending = back.releasingOf(id);
                if (!pending.isEmpty()) {
                    assertThat(back.release(id, pending, 0).ok()).isTrue();
                    assertThat(back.releasingOf(id).isEmpty()).isTrue();
                }
            }
            checkInvariants(fresh, back, "released run " + run);
        }
    }

    @Test
    void answerTypes_carryRfc51Numbers() {
        assertThat(List.of(Answer.Type.values())).extracting(Answer.Type::code).containsExactly(0, 1, 2, 3);
    }

    /** dynamic reallocation's invariants of reallocation, on the whole state. */
    static void checkInvariants(Cluster c, Reallocs re, String context) {
        Map<Pool, Set<Integer>> held = new LinkedHashMap<>();
        Map<Pool, Set<Integer>> releasing = new LinkedHashMap<>();
        for (Running r : c.running().values()) {
            r.picks().forEach((p, idx) -> {
                for (int i : idx) {
                    assertThat(held.computeIfAbsent(p, k -> new HashSet<>()).add(i)).as(context + ": held twice").isTrue();
                    assertThat(p.states[i]).as(context).isEqualTo(InstanceState.HELD);
                    assertThat(p.heldBy[i]).as(context).isEqualTo(r.spec().id());
                }
            });
            r.releasing().forEach((p, idx) -> {
                for (int i : idx) {
                    assertThat(held.getOrDefault(p, Set.of())).as(context + ": used and given back").doesNotContain(i);
                    assertThat(releasing.computeIfAbsent(p, k -> new HashSet<>()).add(i)).as(context).isTrue();
                    assertThat(p.states[i]).as(context).isEqualTo(InstanceState.RELEASING);
                    assertThat(p.heldBy[i]).as(context).isEqualTo(r.spec().id());
                }
            });
            // a job's grant and environment are what it holds minus what is being given back
            assertThat(r.grant()).as(context).isEqualTo(Grant.of(r.picks()));
            assertThat(c.environment(r.spec().id(), "node00").orElseThrow()).as(context)
                    .isEqualTo(Grant.of(r.picks()).environment("node00"));
            assertThat(re.releasingOf(r.spec().id())).isEqualTo(Grant.of(r.releasing()));
        }
        for (Map<String, Pool> ps : c.configured().pools().values()) {
            for (Pool p : ps.values()) {
                int h = held.getOrDefault(p, Set.of()).size();
                int g = releasing.getOrDefault(p, Set.of()).size();
                long free = java.util.Arrays.stream(p.states).filter(s -> s == InstanceState.FREE).count();
                assertThat(h + g + free).as(context + ": held + releasing + free = pool").isEqualTo(p.size());
                assertThat(p.free()).as(context).isEqualTo((int) free);
            }
        }
        re.waiting().forEach(w -> assertThat(c.isRunning(w.realloc().job())).as(context + ": waits for a gone job").isTrue());
    }

    /** Added instances satisfy the add request's id= and characteristics (its same= by the golden scripts). */
    private static void obeys(Cluster c, Optional<RequestList> add, Answer a, String context) {
        a.added().byHost().forEach((h, maps) -> maps.forEach((m, ids) -> {
            Pool p = c.configured().pool(h, m).orElseThrow();
            var req = add.orElseThrow().resourceRequests().stream().filter(r -> r.name().equals(m)).findFirst().orElseThrow();
            for (String id : ids) {
                assertThat(req.admits(p.instances[p.indexesOf(id)[0]])).as(context + ": added " + id + " breaks " + req)
                        .isTrue();
            }
        }));
    }

    private static Cluster cluster() throws ParseException {
        Cluster c = new Cluster(Fixtures.TABLE);
        c.configure("node00", ComplexValues.parse(HOST, Fixtures.TABLE), 0);
        c.configure(Cluster.GLOBAL, ComplexValues.parse("lic=3(la lb lc)", Fixtures.TABLE), 0);
        return c;
    }

    private static RequestList parse(String s) throws ParseException {
        return RequestList.parse(s, Fixtures.TABLE);
    }

    private static String pick(Random rnd, String[] a) {
        return a[rnd.nextInt(a.length)];
    }

    /** A random non-empty part of {@code g} (or {@code g} itself when empty). */
    private static Grant some(Random rnd, Grant g) {
        Map<String, Map<String, List<String>>> out = new LinkedHashMap<>();
        g.byHost().forEach((h, maps) -> maps.forEach((m, ids) -> {
            List<String> part = new ArrayList<>();
            ids.forEach(id -> {
                if (rnd.nextBoolean()) {
                    part.add(id);
                }
            });
            if (!part.isEmpty()) {
                out.computeIfAbsent(h, k -> new LinkedHashMap<>()).put(m, part);
            }
        }));
        return out.isEmpty() ? g : new Grant(out);
    }

    private static void collect(List<Event> events, List<Answer> into) {
        events.stream().filter(e -> e.kind() == Event.Kind.REPLY).map(e -> ((Event.Reply) e).answer()).forEach(into::add);
    }
}
