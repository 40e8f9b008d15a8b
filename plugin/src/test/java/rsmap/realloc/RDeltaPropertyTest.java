// Property test of RFC 51's R deltas: every SUCCESS's R_delta_add / R_delta_sub round-trips
// through R.parse and RDelta.grantOf and names exactly the instances the answer added or took away, at
// their positions.
package rsmap.realloc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import rsmap.Fixtures;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Decision;
import rsmap.alloc.Grant;
import rsmap.alloc.JobSpec;
import rsmap.alloc.Positions;
import rsmap.flux.Idset;
import rsmap.flux.R;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;

class RDeltaPropertyTest {
    private static final long SEED = Long.getLong("rsmap.seed", 51L);
    private static final int RUNS = 30;
    private static final int STEPS = 150;
    private static final String[] HOSTS = {"node01", "node02", "node03"};
    private static final String[] CHANGES = {"gpu=1", "gpu=2", "gpu=1[same=id]", "nic=1", "lic=1", "gpu=1,nic=1"};

    @Test
    void success_rDeltas_roundTripAndNameExactlyTheInstances() throws ParseException {
        Random rnd = new Random(SEED);
        int checked = 0;
        for (int run = 0; run < RUNS; run++) {
            Cluster c = cluster();
            Reallocs re = new Reallocs(c);
            for (int step = 0; step < STEPS; step++) {
                String context = "seed " + SEED + " run " + run + " step " + step;
                List<String> jobs = c.runningJobs();
                String job = jobs.isEmpty() ? "j0" : jobs.get(rnd.nextInt(jobs.size()));
                List<Answer> answers = new ArrayList<>();
                int what = rnd.nextInt(10);
                if (what < 3) {
                    String host = HOSTS[rnd.nextInt(HOSTS.length)];
                    Decision d = c.submit(new JobSpec("j" + step, parse(pick(rnd, CHANGES)), Map.of(host, 1), host,
                            JobSpec.UNLIMITED, Optional.empty(), false), step);
                    collect(re.events(d), answers);
                } else if (what < 8) {
                    Optional<RequestList> add = rnd.nextInt(3) > 0 ? Optional.of(parse(pick(rnd, CHANGES))) : Optional.empty();
                    Optional<RequestList> sub = add.isEmpty() || rnd.nextInt(4) == 0
                            ? Optional.of(parse(pick(rnd, CHANGES))) : Optional.empty();
                    Outcome o = re.realloc(new Realloc(job, "t" + step, add, sub, Grant.NONE), step);
                    o.answer().ifPresent(answers::add);
                    collect(o.events(), answers);
                } else if (what < 9) {
                    collect(re.release(job, re.releasingOf(job), step).events(), answers);
                } else {
                    collect(re.events(c.finish(job, step)), answers);
                }
                for (Answer a : answers) {
                    if (a.type() == Answer.Type.SUCCESS) {
                        names(c, a.added(), a.addedAt(), context + " add " + a.allocId());
                        names(c, a.removed(), a.removedAt(), context + " sub " + a.allocId());
                        checked++;
                    }
                }
            }
        }
        assertThat(checked).as("seed " + SEED + ": SUCCESS answers checked").isGreaterThan(100);
    }

    /** R of the grant round-trips, each host keeps its configured rank, and ids/children are the grant's. */
    private static void names(Cluster c, Grant g, Positions at, String context) throws ParseException {
        List<String> hosts = List.copyOf(c.hosts().keySet());
        R r = RDelta.of(g, at, hosts);
        assertThat(R.parse(r.toString())).as(context + ": round trip of " + r).isEqualTo(r);
        assertThat(RDelta.grantOf(r, c)).as(context + ": grantOf inverts " + r).isEqualTo(g);
        assertThat(r.isEmpty()).as(context).isEqualTo(g.isEmpty());
        Map<String, Map<String, List<String>>> named = new TreeMap<>();
        Map<Long, Map<String, Idset>> byRank = r.byRank();
        r.hosts().forEach((rank, host) -> {
            assertThat(rank).as(context + ": rank of " + host).isEqualTo((long) hosts.indexOf(host));
            var configured = c.instances(host);
            byRank.get(rank).forEach((map, idx) -> {
                if (map.equals("core")) {
                    assertThat(idx.isEmpty()).as(context + ": no cores").isTrue();
                    return;
                }
                Map<Long, String> ids = r.ids().get(host).get(map);
                assertThat(ids.keySet()).as(context).containsExactlyElementsOf(idx.ids().boxed().toList());
                ids.forEach((i, id) -> assertThat(configured.get(map).get((int) (long) i).getKey())
                        .as(context + ": identifier at " + host + "/" + map + " " + i).isEqualTo(id));
                named.computeIfAbsent(host, h -> new TreeMap<>()).put(map, sorted(ids.values()));
            });
        });
        Map<String, Map<String, List<String>>> granted = new TreeMap<>();
        g.byHost().forEach((h, maps) -> maps.forEach((m, ids) ->
                granted.computeIfAbsent(h, k -> new TreeMap<>()).put(m, sorted(ids))));
        assertThat(named).as(context + ": R names exactly the grant").isEqualTo(granted);
    }

    private static List<String> sorted(java.util.Collection<String> ids) {
        return ids.stream().sorted().toList();
    }

    private static void collect(List<Event> events, List<Answer> answers) {
        for (Event e : events) {
            if (e instanceof Event.Reply) {
                answers.add(((Event.Reply) e).answer());
            }
        }
    }

    private static Cluster cluster() throws ParseException {
        Cluster c = new Cluster(Fixtures.TABLE);
        c.configure(HOSTS[0], ComplexValues.parse("gpu=6(0 0 0 1 1 1),nic=2(ib0 ib1)", Fixtures.TABLE), 0);
        c.configure(Cluster.GLOBAL, ComplexValues.parse("lic=3(la lb lc)", Fixtures.TABLE), 0);
        c.configure(HOSTS[1], ComplexValues.parse("gpu=4(a b c d)", Fixtures.TABLE), 0);
        c.configure(HOSTS[2], ComplexValues.parse("gpu=2(x y),nic=1(ib0)", Fixtures.TABLE), 0);
        return c;
    }

    private static String pick(Random rnd, String[] from) {
        return from[rnd.nextInt(from.length)];
    }

    private static RequestList parse(String s) throws ParseException {
        return RequestList.parse(s, Fixtures.TABLE);
    }
}
