// Property test of alternatives: exactly one option is allocated, never a lower-ordered one
// when a higher-ordered one could start at the same time; slots never exceed a host's capacity.
package rsmap.place;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import org.junit.jupiter.api.Test;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Decision;
import rsmap.alloc.JobSpec;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.node.Node;
import rsmap.node.NodeAttributes;
import rsmap.request.RequestList;

class AlternativesPropertyTest {
    private static final long SEED = Long.getLong("rsmap.seed", 15L);
    private static final int RUNS = 300;

    @Test
    void submit_randomAlternatives_exactlyOneAllocatedAndNeverALowerOrderedOne() throws ParseException {
        for (int run = 0; run < RUNS; run++) {
            long seed = SEED * 1_000_003L + run;
            try {
                once(new Random(seed));
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("seed " + seed + " (rerun with -Drsmap.seed): " + e.getMessage(), e);
            }
        }
    }

    private void once(Random rnd) throws ParseException {
        ComplexTable table = ComplexTable.parse("slots s INT <= YES YES 1 1000\n");
        Cluster cluster = new Cluster(table);
        ComplexValues none = ComplexValues.parse("NONE", table, Limits.DEFAULT);
        int hosts = 1 + rnd.nextInt(6);
        List<String> names = new ArrayList<>();
        Map<String, Integer> capacity = new LinkedHashMap<>();
        for (int h = 0; h < hosts; h++) {
            String name = "n" + h;
            names.add(name);
            cluster.configure(name, none, 0);
            int cap = 1 + rnd.nextInt(8);
            capacity.put(name, cap);
            cluster.setSlots(name, OptionalInt.of(cap), 0);
        }
        Map<String, Alternatives> jobs = new HashMap<>();
        List<String> live = new ArrayList<>();
        long time = 0;
        for (int step = 0; step < 30; step++) {
            time += rnd.nextInt(3);
            if (!live.isEmpty() && rnd.nextInt(3) == 0) {
                String gone = live.remove(rnd.nextInt(live.size()));
                Decision d = cluster.finish(gone, time);
                assertThat(d.isRefused()).isFalse();
                continue;
            }
            String id = "j" + step;
            List<Option> options = new ArrayList<>();
            int count = 1 + rnd.nextInt(4);
            for (int i = 0; i < count; i++) {
                List<String> candidates = new ArrayList<>();
                for (String n : names) {
                    if (rnd.nextInt(3) == 0) {
                        candidates.add(n);
                    }
                }
                options.add(new Option("o" + rnd.nextInt(3), new RequestList(List.of()), Map.of(), candidates,
                        1 + rnd.nextInt(12), Optional.empty(), Optional.empty(), List.of(), false));
            }
            Policy policy = List.of(Policy.USER, new Policy(Policy.Kind.FEWEST, List.of()),
                    new Policy(Policy.Kind.RANKING, List.of("o2", "o0"))).get(rnd.nextInt(3));
            PlacedJob job = new PlacedJob(id, options, true, rnd.nextBoolean() ? JobSpec.UNLIMITED : 1 + rnd.nextInt(5),
                    rnd.nextBoolean());
            Alternatives alt = new Alternatives(job, policy, c -> new ClusterView(c, Map.<String, Node>of(),
                    Optional.empty()));
            // Free to this job: capacity less running jobs and the reserved starts of jobs waiting ahead.
            assertThat(cluster.advance(time).started()).isEmpty();
            Map<String, Integer> freeBefore = new HashMap<>();
            for (String n : names) {
                freeBefore.put(n, Math.min(capacity.get(n), cluster.freeSlots(n, time, job.runtime())));
            }
            Decision d = cluster.submit(id, alt, job.runtime(), job.reserve(), time);
            assertThat(d.isRefused()).isFalse();
            live.add(id);
            jobs.put(id, alt);
            if (d.result() == Decision.Result.GRANTED && d.started().isEmpty()) {
                int chosen = ((Choice.Start) alt.last()).alternative();
                // Never a lower-ordered option when a higher-ordered one could start at the same time.
                for (int i : policy.order(options)) {
                    if (i == chosen) {
                        break;
                    }
                    assertThat(couldStart(options.get(i), names, freeBefore)).as("option %d before %d", i, chosen)
                            .isFalse();
                }
                assertThat(couldStart(options.get(chosen), names, freeBefore)).isTrue();
            }
            checkInvariants(cluster, jobs, names, capacity);
        }
    }

    /** Brute force: an option without request can start when its eligible hosts have its slots free. */
    private static boolean couldStart(Option o, List<String> names, Map<String, Integer> free) {
        long sum = 0;
        for (String n : names) {
            if (o.candidates().isEmpty() || o.candidates().contains(n)) {
                sum += free.get(n);
            }
        }
        return sum >= o.slots();
    }

    /** Every running job runs exactly one of its options, on its candidates; no host above capacity. */
    private static void checkInvariants(Cluster c, Map<String, Alternatives> jobs, List<String> names,
                                        Map<String, Integer> capacity) {
        Map<String, Integer> used = new HashMap<>();
        for (String job : c.runningJobs()) {
            JobSpec spec = c.specOf(job).get();
            spec.hosts().forEach((h, n) -> used.merge(h, n, Integer::sum));
            Choice last = jobs.get(job).last();
            assertThat(last.kind()).isEqualTo(Choice.Kind.START);
            Option o = jobs.get(job).job().options().get(((Choice.Start) last).alternative());
            assertThat(spec.hosts().values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(o.slots());
            if (!o.candidates().isEmpty()) {
                assertThat(o.candidates()).containsAll(spec.hosts().keySet());
            }
            assertThat(c.isWaiting(job)).isFalse();
        }
        for (String n : names) {
            assertThat(used.getOrDefault(n, 0)).as("slots used on %s", n).isLessThanOrEqualTo(capacity.get(n));
        }
    }
}
