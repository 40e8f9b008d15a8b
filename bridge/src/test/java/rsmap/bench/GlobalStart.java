// the authority's benchmark of a job start on a host with an authority: JOB_START whose request names a global
// map (the global part granted by the authority over TCP, MUNGE-authenticated) against one that names none,
// in the same run, both daemons the packaged bin/rsmapd.
package rsmap.bench;

import static rsmap.bench.AuthorityHost.expectOk;
import static rsmap.bench.AuthorityHost.jobStart;

import java.util.Arrays;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

/**
 * One client on the host's socket, one command at a time: {@code JOB_START gpu=1} and {@code JOB_START
 * gpu=1,lic=1} alternate (each followed by its JOB_END, not measured) on a host of 64 GPUs whose authority
 * serves 64 seats. The host forces one journal record; with a global part the authority forces one first,
 * and the host waits for its answer. A real munged (a fresh key) authenticates the host's one connection.
 * Args: {@code [ROUNDS]} (default 2000). The target: the global start under 2x the local one.
 */
public final class GlobalStart {
    static final double TARGET_RATIO = 2.0;

    private GlobalStart() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        try (AuthorityHost cell = AuthorityHost.start("rsmap-bench-global", "lic=64(" + ids("l") + ")",
                "gpu=64(" + ids("") + ")");
             TestClient c = new TestClient(cell.host().socket());
             TestClient a = new TestClient(cell.authority().socket())) {
            long tid = 1;
            expectOk(c.call(Frame.of(tid++, Code.INIT.value(), Session.VERSION)));
            expectOk(a.call(Frame.of(tid++, Code.INIT.value(), Session.VERSION)));
            long[] direct = new long[rounds];
            long[] local = new long[rounds];
            long[] global = new long[rounds];
            for (int w = 0; w < 2; w++) { // warm-up, then measured
                for (int r = 0; r < rounds; r++) {
                    long t0 = System.nanoTime();
                    expectOk(c.call(jobStart(tid++, "a" + r, "gpu=1")));
                    local[r] = System.nanoTime() - t0;
                    expectOk(c.call(Frame.of(tid++, Code.JOB_END.value(), "{\"job\":\"a" + r + "\"}")));
                    t0 = System.nanoTime();
                    expectOk(c.call(jobStart(tid++, "b" + r, "gpu=1,lic=1")));
                    global[r] = System.nanoTime() - t0;
                    expectOk(c.call(Frame.of(tid++, Code.JOB_END.value(), "{\"job\":\"b" + r + "\"}")));
                    // The authority's own share: its JOB_START of a global part, on its Unix socket.
                    t0 = System.nanoTime();
                    expectOk(a.call(Frame.of(tid++, Code.JOB_START.value(), "{\"host\":\"other\",\"job\":\"d" + r
                            + "\",\"user\":\"bench\",\"request\":\"lic=1\"}")));
                    direct[r] = System.nanoTime() - t0;
                    expectOk(a.call(Frame.of(tid++, Code.JOB_END.value(), "{\"host\":\"other\",\"job\":\"d" + r + "\"}")));
                }
            }
            double l50 = pct(local, 50);
            double l99 = pct(local, 99);
            double g50 = pct(global, 50);
            double g99 = pct(global, 99);
            System.out.printf("JOB_START with a global part (authority over TCP + MUNGE) against one without, one"
                    + " client, %d rounds; rsmapd JVM options %s%n", rounds, cell.host().jvmOptions());
            System.out.printf("%-34s p50 %8.1f us  p99 %8.1f us%n", "JOB_START gpu=1 (baseline)", l50 / 1e3,
                    l99 / 1e3);
            System.out.printf("%-34s p50 %8.1f us  p99 %8.1f us  ratio p50 %.2fx, p99 %.2fx (target < %.0fx: %s)%n",
                    "JOB_START gpu=1,lic=1", g50 / 1e3, g99 / 1e3, g50 / l50, g99 / l99, TARGET_RATIO,
                    g50 / l50 < TARGET_RATIO ? "met" : "MISSED");
            System.out.printf("%-34s p50 %8.1f us  p99 %8.1f us  (the authority's share, without TCP and MUNGE)%n",
                    "authority JOB_START lic=1 (Unix)", pct(direct, 50) / 1e3, pct(direct, 99) / 1e3);
        }
    }

    private static String ids(String prefix) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 64; i++) {
            b.append(i == 0 ? "" : " ").append(prefix).append(i);
        }
        return b.toString();
    }

    private static double pct(long[] t, int p) {
        long[] s = t.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1)];
    }
}
