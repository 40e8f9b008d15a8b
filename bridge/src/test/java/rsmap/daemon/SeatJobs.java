// Test support: 200 jobs of lic=1 through the hooks on node01 and node02 of an AuthorityCell, each tried again
// while its prolog asks to reschedule (as a scheduler does), each writing the span it held its seat; and the
// check that no seat of la..ld was held by two jobs at once.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.daemon.AuthorityCell.finish;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

public final class SeatJobs {
    private static final int JOBS = 200;
    private final Path out;
    private final AtomicInteger done = new AtomicInteger();
    private final AtomicInteger rescheduled = new AtomicInteger();
    private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
    private final List<Future<?>> runs = new ArrayList<>();
    private final ExecutorService pool = Executors.newFixedThreadPool(8);

    private SeatJobs(Path out) {
        this.out = out;
    }

    /** Submits the 200 jobs, 8 at a time, alternating hosts; each tried up to {@code attempts} times, 50 ms apart. */
    public static SeatJobs start(AuthorityCell cell, int attempts) throws Exception {
        Path out = Files.createDirectories(cell.shared().resolve("out"));
        Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rwxrwxrwx"));
        SeatJobs jobs = new SeatJobs(out);
        cell.closeAfter(jobs.pool::shutdownNow); // a test that fails before awaitAll starts no more jobs
        for (int i = 0; i < JOBS; i++) {
            String host = i % 2 == 0 ? "node01" : "node02";
            String id = Integer.toString(1000 + i);
            jobs.runs.add(jobs.pool.submit(() -> {
                // A seat held from the job's first line to its last: two jobs' spans of one seat never overlap.
                String script = "s=$(date +%s%N); sleep 0.02; echo \"$SGE_HGR_lic $s $(date +%s%N)\" > " + out
                        + "/" + host + "-" + id;
                for (int attempt = 0; attempt < attempts; attempt++) {
                    String r = finish(cell.job(host, id, "lic=1", script));
                    if (r.endsWith("exit=0")) {
                        jobs.done.incrementAndGet();
                        return null;
                    }
                    if (!r.endsWith("exit=99")) {
                        jobs.failures.add(host + ":" + id + ": " + r);
                        return null;
                    }
                    jobs.rescheduled.incrementAndGet(); // the scheduler tries it again a little later
                    Thread.sleep(50); // the scheduler's gap before it dispatches a rescheduled job again
                }
                jobs.failures.add(host + ":" + id + " never started");
                return null;
            }));
        }
        return jobs;
    }

    /** Jobs that ran. */
    public int done() {
        return done.get();
    }

    /** Times a prolog asked to reschedule. */
    public int rescheduled() {
        return rescheduled.get();
    }

    /** Jobs that failed otherwise, or never started, each with what it said. */
    public List<String> failures() {
        return failures;
    }

    /** Waits for every job (240 s each): none failed, and every one ran exactly once. */
    public void awaitAll() throws Exception {
        for (Future<?> f : runs) {
            f.get(240, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(failures).isEmpty();
        assertThat(done.get()).as("every job ran exactly once").isEqualTo(JOBS);
    }

    /** Every job wrote its span of one of la..ld, and no two spans of one seat overlap. */
    public void assertNoSeatHeldTwice() throws Exception {
        Map<String, List<long[]>> spans = new HashMap<>();
        try (Stream<Path> files = Files.list(out)) {
            for (Path f : files.toList()) {
                String[] w = Files.readString(f).strip().split(" ");
                assertThat(w).as(f.toString()).hasSize(3);
                spans.computeIfAbsent(w[0], k -> new ArrayList<>()).add(new long[] {Long.parseLong(w[1]),
                        Long.parseLong(w[2])});
            }
        }
        assertThat(spans.values().stream().mapToInt(List::size).sum()).isEqualTo(JOBS);
        assertThat(spans.keySet()).isSubsetOf("la", "lb", "lc", "ld");
        for (Map.Entry<String, List<long[]>> e : spans.entrySet()) {
            List<long[]> s = e.getValue();
            s.sort(Comparator.comparingLong(a -> a[0]));
            for (int i = 1; i < s.size(); i++) {
                assertThat(s.get(i)[0]).as("seat " + e.getKey() + " held by two jobs at once")
                        .isGreaterThan(s.get(i - 1)[1]);
            }
        }
    }
}
