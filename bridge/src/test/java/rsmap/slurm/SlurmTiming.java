// the Slurm integration's benchmark: srun job start to finish with and without --rsmap, on the same cluster in the same
// run (target: ratio under 1.1). A harness, not a test: it prints, and never runs in verify.
package rsmap.slurm;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Run as root where SlurmIT runs (the SPANK plugin built, the Slurm packages installed), from the
 * project root:
 *
 * <pre>
 * mvn -B -q -o -pl bridge test-compile exec:exec -Dexec.executable=java -Dexec.classpathScope=test \
 *     -Dexec.args='-cp %classpath rsmap.slurm.SlurmTiming 40'
 * </pre>
 *
 * Each round runs {@code srun true} and {@code srun --rsmap=gpu=1 true} back to back (the order
 * alternating), so that drift in the machine hits both alike; three warm-up rounds are not counted.
 */
public final class SlurmTiming {
    private SlurmTiming() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 40;
        try (SlurmCluster cluster = SlurmCluster.start()) {
            List<String> plain = List.of("srun", "-D", cluster.work.toString(), "true");
            List<String> rsmap = List.of("srun", "-D", cluster.work.toString(), "--rsmap=gpu=1", "true");
            long[] without = new long[rounds];
            long[] with = new long[rounds];
            for (int r = -3; r < rounds; r++) {
                boolean rsmapFirst = (r & 1) == 1;
                long a = time(cluster, rsmapFirst ? rsmap : plain);
                long b = time(cluster, rsmapFirst ? plain : rsmap);
                if (r >= 0) {
                    without[r] = rsmapFirst ? b : a;
                    with[r] = rsmapFirst ? a : b;
                }
            }
            if (!cluster.awaitReleased(null).isEmpty()) {
                throw new IllegalStateException("rsmapd still holds grants: " + cluster.held());
            }
            System.out.printf("srun true                 %d jobs  median %6.1f ms  mean %6.1f ms  p90 %6.1f ms%n",
                    rounds, pct(without, 50), mean(without), pct(without, 90));
            System.out.printf("srun --rsmap=gpu=1 true   %d jobs  median %6.1f ms  mean %6.1f ms  p90 %6.1f ms%n",
                    rounds, pct(with, 50), mean(with), pct(with, 90));
            System.out.printf("ratio with/without        median %.3f  mean %.3f  (target: under 1.1)%n",
                    pct(with, 50) / pct(without, 50), mean(with) / mean(without));
        }
    }

    private static long time(SlurmCluster cluster, List<String> command) throws Exception {
        long t0 = System.nanoTime();
        SlurmCluster.Run r = cluster.run(command, Map.of());
        long t = System.nanoTime() - t0;
        if (r.code() != 0) {
            throw new IllegalStateException(command + " exited " + r.code() + ": " + r.err());
        }
        return t;
    }

    private static double pct(long[] ns, int p) {
        long[] s = ns.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, s.length * p / 100)] / 1e6;
    }

    private static double mean(long[] ns) {
        return Arrays.stream(ns).average().orElse(0) / 1e6;
    }

}
