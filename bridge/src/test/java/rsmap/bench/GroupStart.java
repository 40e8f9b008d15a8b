// The cost of one group for the whole job: JOB_START gpu=2[same=id,scope=job] on a host with an authority
// (a trial decision, JOB_KEY over TCP + MUNGE with the authority's forced key record, the pinned decision)
// against gpu=2[same=id] on the same host, in the same run, both daemons the packaged bin/rsmapd.
package rsmap.bench;

import static rsmap.bench.AuthorityHost.expectOk;
import static rsmap.bench.AuthorityHost.jobStart;

import java.util.Arrays;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

/**
 * One client on the host's socket, one command at a time: the two starts alternate, each followed by its
 * JOB_END (not measured; the scope=job one also tells the authority, which forgets the job's group). The
 * host has 32 cards of two shares. Args: {@code [ROUNDS]} (default 2000). docs/cluster.md, "One group
 * for the whole job".
 */
public final class GroupStart {
    private GroupStart() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        StringBuilder cards = new StringBuilder();
        for (int i = 0; i < 32; i++) {
            cards.append(i == 0 ? "" : " ").append(i).append(' ').append(i);
        }
        try (AuthorityHost cell = AuthorityHost.start("rsmap-bench-group", "lic=1(la)", "gpu=64(" + cards + ")");
             TestClient c = new TestClient(cell.host().socket())) {
            long tid = 1;
            expectOk(c.call(Frame.of(tid++, Code.INIT.value(), Session.VERSION)));
            long[] alone = new long[rounds];
            long[] agreed = new long[rounds];
            for (int w = 0; w < 2; w++) { // warm-up, then measured
                for (int r = 0; r < rounds; r++) {
                    long t0 = System.nanoTime();
                    expectOk(c.call(jobStart(tid++, "a" + r, "gpu=2[same=id]")));
                    alone[r] = System.nanoTime() - t0;
                    expectOk(c.call(Frame.of(tid++, Code.JOB_END.value(), "{\"job\":\"a" + r + "\"}")));
                    t0 = System.nanoTime();
                    expectOk(c.call(jobStart(tid++, "b" + r, "gpu=2[same=id,scope=job]")));
                    agreed[r] = System.nanoTime() - t0;
                    expectOk(c.call(Frame.of(tid++, Code.JOB_END.value(), "{\"job\":\"b" + r + "\"}")));
                }
            }
            System.out.printf("JOB_START scope=job (agreed with the authority over TCP + MUNGE) against scope=host,"
                    + " one client, %d rounds; rsmapd JVM options %s%n", rounds, cell.host().jvmOptions());
            System.out.printf("%-38s p50 %8.1f us  p99 %8.1f us%n", "JOB_START gpu=2[same=id] (baseline)",
                    pct(alone, 50) / 1e3, pct(alone, 99) / 1e3);
            System.out.printf("%-38s p50 %8.1f us  p99 %8.1f us  ratio p50 %.2fx, p99 %.2fx%n",
                    "JOB_START gpu=2[same=id,scope=job]", pct(agreed, 50) / 1e3, pct(agreed, 99) / 1e3,
                    pct(agreed, 50) / pct(alone, 50), pct(agreed, 99) / pct(alone, 99));
        }
    }

    private static double pct(long[] t, int p) {
        long[] s = t.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1)];
    }
}
