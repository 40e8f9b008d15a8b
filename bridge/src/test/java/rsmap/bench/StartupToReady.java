// the daemon and its protocol's benchmark: from the exec of bin/rsmapd to READY=1 on the NOTIFY_SOCKET the harness listens
// on, with an empty journal and with journals of 10,000 records to replay, beside the start of an idle
// JVM with the same options measured in the same run (target: under 1 s).
package rsmap.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Three cases: the example host with an empty journal; the example host with 10,000 records of churn
 * (5,000 jobs, each started and ended); and the worst case, 10,000 live grants on a map of 10,000
 * instances. The journals are written by the daemon itself (JOB_START and JOB_END over the socket) and
 * replayed by every later start. Each case is started {@code RUNS} times after one unreported start
 * (page cache, JNA's native part unpacked), interleaved; the median and the slowest are printed and the
 * median is held against the target. Args: {@code [RUNS [RECORDS]]} (defaults 7 and 10000).
 */
public final class StartupToReady {
    static final double TARGET_MS = 1000;

    private StartupToReady() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 7;
        int records = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        String example = Files.readString(Rsmapd.ROOT.resolve("examples/node01.complex_values"));
        Path empty = Files.createTempDirectory("rsmap-bench-start");
        Path churn = Files.createTempDirectory("rsmap-bench-start-churn");
        Path live = Files.createTempDirectory("rsmap-bench-start-live");
        try {
            run(runs, records, example, empty, churn, live);
        } finally {
            for (Path p : List.of(empty, churn, live)) {
                rsmap.daemon.Trees.delete(p);
            }
        }
    }

    private static void run(int runs, int records, String example, Path empty, Path churn, Path live) throws Exception {
        Rsmapd.configure(empty, example);
        Rsmapd.configure(churn, example);
        Rsmapd.configure(live, "gpu=" + records + "(0-" + (records - 1) + ")");
        List<String> options;
        try (Rsmapd d = Rsmapd.start(churn)) {
            GrantRss.jobs(d.socket(), records / 2, true);
        }
        try (Rsmapd d = Rsmapd.start(live)) {
            GrantRss.jobs(d.socket(), records, false);
            options = d.jvmOptions();
        }

        Path[] cases = {empty, churn, live};
        String[] names = {"example host, empty journal",
                "example host, " + records + " records of churn (" + kib(churn) + " KiB)",
                records + " instances, " + records + " live grants (" + kib(live) + " KiB)"};
        long[] base = new long[runs];
        long[][] ns = new long[cases.length][runs];
        Idle.start(options).close();
        for (Path c : cases) {
            start(c);
        }
        for (int r = 0; r < runs; r++) { // interleaved, so that a slow moment of the machine hits every case
            try (Idle i = Idle.start(options)) {
                base[r] = i.readyNanos();
            }
            for (int c = 0; c < cases.length; c++) {
                ns[c][r] = start(cases[c]);
            }
        }
        System.out.printf("start-up: exec to READY=1 on NOTIFY_SOCKET, %d runs each; JVM options %s%n", runs, options);
        System.out.printf("  %-58s median %6.1f ms  max %6.1f ms%n", "baseline: idle JVM, same options, to its first line",
                median(base), max(base));
        for (int c = 0; c < cases.length; c++) {
            System.out.printf("  %-58s median %6.1f ms  max %6.1f ms  (%.1fx the idle JVM)  target < %.0f ms %s%n",
                    "rsmapd, " + names[c], median(ns[c]), max(ns[c]), median(ns[c]) / median(base), TARGET_MS,
                    median(ns[c]) < TARGET_MS ? "met" : "MISSED by " + Math.round(median(ns[c]) - TARGET_MS) + " ms");
        }
    }

    private static long kib(Path dir) throws java.io.IOException {
        return Files.size(dir.resolve("state/journal")) / 1024;
    }

    private static long start(Path dir) throws Exception {
        try (Rsmapd d = Rsmapd.start(dir)) {
            return d.readyNanos();
        }
    }

    private static double median(long[] ns) {
        long[] s = ns.clone();
        Arrays.sort(s);
        return s[s.length / 2] / 1e6;
    }

    private static double max(long[] ns) {
        return Arrays.stream(ns).max().orElse(0) / 1e6;
    }
}
