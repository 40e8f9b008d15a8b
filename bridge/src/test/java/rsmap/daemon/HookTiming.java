// the daemon and its protocol's benchmark: what rsmap-hook prolog + epilog add to a job start, beside the time to exec a
// no-op C program, both measured here in the same run (target: the hook adds under 1 ms).
package rsmap.daemon;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import rsmap.daemon.config.Config;

/**
 * Run: {@code java -cp <bridge test classpath> rsmap.daemon.HookTiming [rounds]} from {@code bridge/}
 * after {@code mvn package}; it compiles {@code src/test/c/noop.c} with gcc itself.
 */
public final class HookTiming {
    private HookTiming() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 500;
        Path tmp = Files.createTempDirectory("rsmap-timing");
        Path noop = tmp.resolve("noop");
        if (new ProcessBuilder("gcc", "-O2", "-o", noop.toString(), "src/test/c/noop.c").inheritIO().start().waitFor() != 0) {
            throw new IllegalStateException("gcc failed");
        }
        Config config = TestDaemon.config(tmp, "gpu=8(0 0 0 0 1 1 1 1)");
        try (Daemon daemon = TestDaemon.start(config)) {
            String hook = Path.of("target", "rsmap-hook").toAbsolutePath().toString();
            long[] base = new long[rounds];
            long[] start = new long[rounds];
            long[] end = new long[rounds];
            for (int r = 0; r < rounds; r++) {
                base[r] = time(new ProcessBuilder(noop.toString()), Map.of());
                Map<String, String> env = Map.of("RSMAP_SOCKET", config.socket().toString(), "JOB_ID", "j" + r,
                        "NSLOTS", "1", "RSMAP_REQUEST", "gpu=1");
                start[r] = time(new ProcessBuilder(hook, "prolog"), env);
                end[r] = time(new ProcessBuilder(hook, "epilog"), env);
            }
            double b = median(base);
            System.out.printf("exec of a no-op C program   median %7.1f us%n", b / 1e3);
            System.out.printf("rsmap-hook prolog (JOB_START) median %7.1f us  (adds %.1f us)%n", median(start) / 1e3,
                    (median(start) - b) / 1e3);
            System.out.printf("rsmap-hook epilog (JOB_END)   median %7.1f us  (adds %.1f us)%n", median(end) / 1e3,
                    (median(end) - b) / 1e3);
        }
        // What every grant and release must pay before its answer: one journal record forced to disk, on
        // the same file system.
        long[] sync = new long[Math.min(rounds, 200)];
        try (rsmap.journal.Journal j = rsmap.journal.Journal.open(tmp.resolve("sync-journal"))) {
            for (int r = 0; r < sync.length; r++) {
                long t0 = System.nanoTime();
                j.append("{\"op\":\"start\",\"job\":\"" + r + "\",\"grant\":{\"node01\":{\"gpu\":[\"0\"]}}}");
                sync[r] = System.nanoTime() - t0;
            }
        }
        System.out.printf("of which one journal record forced to disk (fdatasync)  median %7.1f us%n", median(sync) / 1e3);
    }

    private static long time(ProcessBuilder pb, Map<String, String> env) throws Exception {
        pb.environment().putAll(env);
        long t0 = System.nanoTime();
        int rc = pb.start().waitFor();
        long t = System.nanoTime() - t0;
        if (rc != 0) {
            throw new IllegalStateException(pb.command() + " exited " + rc);
        }
        return t;
    }

    private static double median(long[] ns) {
        long[] s = ns.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
