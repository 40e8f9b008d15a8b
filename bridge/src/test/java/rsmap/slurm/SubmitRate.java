// Submissions per second through a real slurmctld with the packaged job_submit.lua: sbatch without a filter,
// with --rsmap-filter asked of the authority by the Lua module rsmap_place.so inside slurmctld, by the C
// rsmap-place run per submission, and by the Java `rsmap place` (a JVM per submission). slurmctld runs
// job_submit.lua holding its job lock, so this rate bounds the whole cluster's.
package rsmap.slurm;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Rounds of {@code JOBS} held batch jobs (they are submitted, never run) for each case, interleaved; the
 * rate of each case is its jobs over its summed time, and beside it slurmctld's own time per submission
 * (sdiag's REQUEST_SUBMIT_BATCH_JOB total_time, reset before each case: what the job lock is held for).
 * Each case's first submission after job_submit.lua was switched to it is not counted (slurmctld loads the
 * script again). Args: {@code [JOBS] [ROUNDS] [c]} (default 10 and 3; {@code c} leaves the Java case out).
 * Run as root with Slurm installed: {@code mvn -Pbench -Dbench.main=rsmap.slurm.SubmitRate verify}.
 */
public final class SubmitRate {
    /** Filtered submissions before the measured ones: the authority's PLACE compiled, as in a running cluster. */
    private static final int WARM = 30;
    /** PLACEs asked of the authority directly before those: its PLACE path compiled. */
    private static final int WARM_PLACES = 1000;
    private SubmitRate() {
    }

    public static void main(String[] args) throws Exception {
        int jobs = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        String[] all = {"sbatch, no filter", "--rsmap-filter, rsmap_place.so (Lua)", "--rsmap-filter, rsmap-place (C)",
            "--rsmap-filter, rsmap place (Java)"};
        String[] cases = args.length > 2 && args[2].equals("c") ? java.util.Arrays.copyOf(all, 3) : all;
        long[] nanos = new long[cases.length];
        long[] server = new long[cases.length];
        String log;
        try (SlurmCluster cluster = SlurmCluster.start()) {
            // What job_submit.lua asks with, case by case (SubmitScript.use): the module (slurmctld's own setting),
            // the C client itself as installed (no fault-injecting script in between), or a script that runs
            // the Java one.
            Path java = cluster.dir.resolve("java-rsmap-place");
            Files.writeString(java, "#!/bin/sh\nexec " + Path.of("..", "bin", "rsmap").toAbsolutePath().normalize()
                    + " place \"$@\"\n");
            java.toFile().setExecutable(true);
            String c = Path.of("target", "rsmap-place").toAbsolutePath().toString();
            List<Map<String, String>> settings = List.of(Map.of(), Map.of(), Map.of("RSMAP_PLACE_COMMAND", c),
                    Map.of("RSMAP_PLACE_COMMAND", java.toString()));
            submit(cluster, 2, false); // slurmctld's first submissions load the script
            // The authority's first few hundred PLACEs run its code uncompiled (C1 compiles a method after
            // some hundred calls) and cost about a millisecond more each: a running authority has long
            // compiled them. So PLACEs first, each on a connection of its own as rsmap-place asks, then
            // a few filtered submissions through the module and the C client.
            for (int i = 0; i < WARM_PLACES; i++) {
                try (rsmap.wire.Client client = rsmap.wire.Client.connect(cluster.dir.resolve("authority.sock"))) {
                    client.call(rsmap.wire.Code.PLACE, "{\"filter\":\"cpu_speed > 2GHz\"}");
                }
            }
            for (int k = 1; k <= 2; k++) {
                cluster.submit.use(settings.get(k));
                submit(cluster, WARM, true);
            }
            for (int r = 0; r < rounds; r++) {
                for (int k = 0; k < cases.length; k++) {
                    cluster.submit.use(settings.get(k));
                    submit(cluster, 1, k > 0); // slurmctld loads the script again: not measured
                    cluster.run(List.of("sdiag", "-r"), Map.of());
                    nanos[k] += submit(cluster, jobs, k > 0);
                    server[k] += submitMicros(cluster);
                }
            }
            cluster.run(List.of("scancel", "--user=nobody"), Map.of());
            log = Files.readString(cluster.dir.resolve("log/slurmctld.log"));
        }
        System.out.printf("submission through slurmctld and job_submit.lua: %d rounds of %d held jobs per case%n",
                rounds, jobs);
        double base = rate(nanos[0], jobs * rounds);
        for (int k = 0; k < cases.length; k++) {
            double rate = rate(nanos[k], jobs * rounds);
            System.out.printf("  %-38s %7.1f jobs/s  %7.1f ms/job  (%.2fx the time of no filter)  slurmctld %6.2f ms/job%n",
                    cases[k], rate, 1000 / rate, base / rate, server[k] / 1000.0 / (jobs * rounds));
        }
        // what job_submit.lua said it asks with (slurmctld's log, info: once for each load of the script)
        for (String line : log.lines().filter(l -> l.contains("rsmap: --rsmap-filter is asked"))
                .map(l -> l.replaceAll("^\\[[^]]*\\] ", "")).distinct().toList()) {
            System.out.println("  " + line);
        }
    }

    /** Submits {@code n} held jobs one after another; their summed wall time. */
    private static long submit(SlurmCluster cluster, int n, boolean filter) throws Exception {
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            List<String> cmd = new ArrayList<>(List.of("sbatch", "--hold", "--parsable", "-o", "/dev/null"));
            if (filter) {
                cmd.add("--rsmap-filter=cpu_speed > 2GHz");
            }
            cmd.addAll(List.of("--wrap", "true"));
            SlurmCluster.Run r = cluster.asNobody(Map.of(), cmd.toArray(new String[0]));
            if (r.code() != 0) {
                throw new IllegalStateException("sbatch exited " + r.code() + ": " + r.err());
            }
        }
        return System.nanoTime() - t0;
    }

    /** slurmctld's summed time in REQUEST_SUBMIT_BATCH_JOB since the last {@code sdiag -r}, in µs (sdiag). */
    private static long submitMicros(SlurmCluster cluster) throws Exception {
        SlurmCluster.Run r = cluster.run(List.of("sdiag"), Map.of());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("REQUEST_SUBMIT_BATCH_JOB\\s*\\(\\s*\\d+\\)\\s*count:\\d+"
                + "\\s+ave_time:\\d+\\s+total_time:(\\d+)").matcher(r.out());
        if (!m.find()) {
            throw new IllegalStateException("sdiag has no REQUEST_SUBMIT_BATCH_JOB line: " + r.out() + r.err());
        }
        return Long.parseLong(m.group(1));
    }

    private static double rate(long nanos, int jobs) {
        return jobs / (nanos / 1e9);
    }
}
