// the daemon and its protocol's benchmark: the resident memory of rsmapd holding 10,000 active grants, beside the same JVM
// idle and the daemon before its first grant, all measured in the same run (target: under 128 MiB).
package rsmap.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

/**
 * rsmapd runs as its own process from bin/rsmapd on a host with one map of {@code N} instances
 * ({@code gpu=N(0-(N-1))}); one client makes {@code N} JOB_START calls of {@code gpu=1}, each journaled
 * (forced) before its answer; then VmRSS and VmHWM are read from {@code /proc/<pid>/status}. Args:
 * {@code [GRANTS]} (default 10000).
 */
public final class GrantRss {
    static final long TARGET_MIB = 128;

    private GrantRss() {
    }

    public static void main(String[] args) throws Exception {
        int grants = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        Path dir = Files.createTempDirectory("rsmap-bench-rss");
        Rsmapd.configure(dir, "gpu=" + grants + "(0-" + (grants - 1) + ")");
        try (Rsmapd daemon = Rsmapd.start(dir)) {
            long before = daemon.statusKiB("VmRSS");
            long idle;
            try (Idle baseline = Idle.start(daemon.jvmOptions())) {
                idle = baseline.statusKiB("VmRSS");
            }
            long t0 = System.nanoTime();
            startJobs(daemon.socket(), grants);
            double secs = (System.nanoTime() - t0) / 1e9;
            long after = daemon.statusKiB("VmRSS");
            long peak = daemon.statusKiB("VmHWM");
            int running = runningJobs(daemon.socket());
            if (running != grants) {
                throw new IllegalStateException("QUERY lists " + running + " jobs, not " + grants);
            }
            System.out.printf("RSS with %d active grants (one map of %d instances, JOB_START journaled: %.0f/s); "
                    + "JVM options %s%n", grants, grants, grants / secs, daemon.jvmOptions());
            System.out.printf("  baseline: idle JVM, same options     %7.1f MiB%n", Rsmapd.mib(idle));
            System.out.printf("  baseline: rsmapd serving, no grant   %7.1f MiB%n", Rsmapd.mib(before));
            System.out.printf("  rsmapd with %d grants            %7.1f MiB  (peak %.1f MiB; %.2fx the idle JVM, "
                    + "%.2fx rsmapd before; %.0f bytes per grant)  target < %d MiB %s%n", grants, Rsmapd.mib(after),
                    Rsmapd.mib(peak), (double) after / idle, (double) after / before, (after - before) * 1024.0 / grants,
                    TARGET_MIB, Rsmapd.mib(after) < TARGET_MIB ? "met"
                    : String.format("MISSED by %.1f MiB", Rsmapd.mib(after) - TARGET_MIB));
        } finally {
            rsmap.daemon.Trees.delete(dir);
        }
    }

    /** JOB_START of jobs 0 to n-1, one {@code gpu=1} each, over one connection; any refusal stops the run. */
    static void startJobs(Path socket, int n) throws Exception {
        jobs(socket, n, false);
    }

    /** As {@link #startJobs}, each job ended (JOB_END) right after its start when {@code end}. */
    static void jobs(Path socket, int n, boolean end) throws Exception {
        try (TestClient c = new TestClient(socket)) {
            c.call(Frame.of(1, Code.INIT.value(), Session.VERSION));
            long tid = 2;
            for (int i = 0; i < n; i++) {
                String job = "{\"job\":\"" + i + "\",\"task\":\"undefined\"";
                ok(c.call(Frame.of(tid++, Code.JOB_START.value(), job + ",\"slots\":1,\"request\":\"gpu=1\"}")), i);
                if (end) {
                    ok(c.call(Frame.of(tid++, Code.JOB_END.value(), job + "}")), i);
                }
            }
        }
    }

    private static void ok(List<Frame> answer, int job) {
        if (answer.isEmpty() || answer.get(answer.size() - 1).code() != Code.OK.value()) {
            throw new IllegalStateException("job " + job + ": " + answer);
        }
    }

    /** The jobs rsmapd's QUERY lists, checked after the RSS was read (the answer itself takes memory). */
    private static int runningJobs(Path socket) throws Exception {
        try (TestClient c = new TestClient(socket)) {
            c.call(Frame.of(1, Code.INIT.value(), Session.VERSION));
            List<Frame> a = c.call(Frame.of(2, Code.QUERY.value(), "{}"));
            return new ObjectMapper().readTree(a.get(0).text(0)).path("jobs").size();
        }
    }
}
