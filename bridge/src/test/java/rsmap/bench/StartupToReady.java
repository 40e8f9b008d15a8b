// Issue 5's benchmark: from the exec of bin/rsmapd to READY=1 on the NOTIFY_SOCKET the harness listens
// on, with an empty journal and with a journal of 10,000 grants to replay, beside the start of an idle
// JVM with the same options measured in the same run (target: under 1 s).
package rsmap.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Each case is started {@code RUNS} times after one unreported start (page cache, JNA's native part
 * unpacked); the median and the slowest are printed. The 10,000-record journal is written by the daemon
 * itself (JOB_START after JOB_START, as {@link GrantRss} does) and replayed by every later start. Args:
 * {@code [RUNS [RECORDS]]} (defaults 10 and 10000).
 */
public final class StartupToReady {
    static final double TARGET_MS = 1000;

    private StartupToReady() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int records = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        Path empty = Files.createTempDirectory("rsmap-bench-start");
        Rsmapd.configure(empty, Files.readString(Rsmapd.ROOT.resolve("examples/node01.complex_values")));
        Path full = Files.createTempDirectory("rsmap-bench-start-journal");
        Rsmapd.configure(full, "gpu=" + records + "(0-" + (records - 1) + ")");
        java.util.List<String> options;
        try (Rsmapd d = Rsmapd.start(full)) {
            GrantRss.startJobs(d.socket(), records);
            options = d.jvmOptions();
        }
        long journalBytes = Files.size(full.resolve("state/journal"));

        long[] base = new long[runs];
        long[] a = new long[runs];
        long[] b = new long[runs];
        Idle.start(options).close();
        start(empty);
        start(full);
        for (int r = 0; r < runs; r++) { // interleaved, so that a slow moment of the machine hits all three
            try (Idle i = Idle.start(options)) {
                base[r] = i.readyNanos();
            }
            a[r] = start(empty);
            b[r] = start(full);
        }
        System.out.printf("start-up: exec to READY=1 on NOTIFY_SOCKET, %d runs each; JVM options %s%n", runs, options);
        System.out.printf("  baseline: idle JVM, same options, to its first line  median %6.1f ms  max %6.1f ms%n",
                median(base), max(base));
        row("rsmapd, example host, empty journal", a, base);
        row("rsmapd, " + records + " instances, journal of " + records + " grants (" + journalBytes / 1024 + " KiB)", b,
                base);
    }

    private static long start(Path dir) throws Exception {
        try (Rsmapd d = Rsmapd.start(dir)) {
            return d.readyNanos();
        }
    }

    private static void row(String what, long[] ns, long[] base) {
        System.out.printf("  %-52s median %6.1f ms  max %6.1f ms  (%.1fx the idle JVM)  target < %.0f ms %s%n", what,
                median(ns), max(ns), median(ns) / median(base), TARGET_MS, max(ns) / 1e6 < TARGET_MS ? "met" : "MISSED");
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
