// What a submission with a filter pays for placement: one call of the C rsmap-place against one call of the
// Java `rsmap place` (bin/rsmap, a JVM start), the same filter to the same authority (bin/rsmapd, role =
// authority, two hosts registered), interleaved; each call is an exec pinned to its own core.
package rsmap.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Args: {@code [RUNS] [CPU]} - calls of each (default 30), the core the calls run on (default 1). */
public final class PlaceCall {
    private PlaceCall() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        String cpu = args.length > 1 ? args[1] : "1";
        Path dir = Files.createTempDirectory("rsmap-bench-place");
        try (Rsmapd authority = Rsmapd.start(Rsmapd.configureAuthority(dir, "lic=1(la)", rsmap.wire.Ports.free(),
                "reconcile_interval = 0").getParent())) {
            try (rsmap.wire.Client c = rsmap.wire.Client.connect(authority.socket())) {
                for (String[] h : new String[][] {{"node01", "x86_64", "2.4GHz"}, {"node02", "aarch64", "1.8GHz"}}) {
                    c.call(rsmap.wire.Code.REGISTER, "{\"host\":\"" + h[0] + "\",\"state\":{\"maps\":{},\"jobs\":[],"
                            + "\"complex_values\":\"gpu=2(0 1)\",\"attributes\":{\"arch\":\"" + h[1]
                            + "\",\"cpu_speed\":\"" + h[2] + "\"}}}");
                }
            }
            String sock = authority.socket().toString();
            List<String> filter = List.of("--filter", "cpu_speed > 2GHz", "--json", "--socket", sock);
            List<String> c = command(cpu, Rsmapd.ROOT.resolve("bridge/target/rsmap-place").toString(), filter);
            List<String> java = command(cpu, Rsmapd.ROOT.resolve("bin/rsmap").toString() + " place", filter);
            time(c);
            time(java);
            long[] tc = new long[runs];
            long[] tj = new long[runs];
            for (int r = 0; r < runs; r++) {
                tc[r] = time(c);
                tj[r] = time(java);
            }
            System.out.printf("placement at submission: one PLACE with a filter, exec to exit, %d calls each, on cpu %s%n",
                    runs, cpu);
            System.out.printf("  %-40s median %8.2f ms  p90 %8.2f ms%n", "rsmap place (Java, bin/rsmap)", ms(tj, 50), ms(tj, 90));
            System.out.printf("  %-40s median %8.2f ms  p90 %8.2f ms  (%.4fx)%n", "rsmap-place (C)", ms(tc, 50), ms(tc, 90),
                    ms(tc, 50) / ms(tj, 50));
        } finally {
            Rsmapd.deleteTree(dir);
        }
    }

    private static List<String> command(String cpu, String program, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of("taskset", "-c", cpu));
        cmd.addAll(Arrays.asList(program.split(" ")));
        cmd.addAll(args);
        return cmd;
    }

    private static long time(List<String> cmd) throws Exception {
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        int exit = p.waitFor();
        long t = System.nanoTime() - t0;
        if (exit != 0 || !new String(out, java.nio.charset.StandardCharsets.UTF_8).contains("\"pass\":[\"node01\"]")) {
            throw new IllegalStateException(cmd + " exited " + exit + ": " + new String(out, java.nio.charset.StandardCharsets.UTF_8));
        }
        return t;
    }

    private static double ms(long[] t, int percentile) {
        long[] s = t.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, s.length * percentile / 100)] / 1e6;
    }
}
