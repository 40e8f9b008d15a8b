// dynamic reallocation's daemon benchmark: the REALLOC round trip through rsmapd (a grow, a take-away, a RELEASE)
// beside JOB_START's, measured in the same run against the packaged bin/rsmapd.
package rsmap.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

/**
 * One client on one connection, one command at a time, on a host of 64 instances ({@code gpu=64}) with
 * 32 other jobs holding one each. Every measured command changes the grant and forces one journal record
 * to disk before its answer: JOB_START (then JOB_END, not measured) against REALLOC adding one instance,
 * REALLOC taking it away, and RELEASE of it. Args: {@code [ROUNDS]} (default 2000).
 */
public final class ReallocRoundTrip {
    private ReallocRoundTrip() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        Path dir = Files.createTempDirectory("rsmap-bench-realloc");
        StringBuilder values = new StringBuilder("gpu=64(");
        for (int i = 0; i < 64; i++) {
            values.append(i == 0 ? "" : " ").append(i);
        }
        Rsmapd.configure(dir, values.append(')').toString());
        try (Rsmapd daemon = Rsmapd.start(dir); TestClient c = new TestClient(daemon.socket())) {
            long tid = 1;
            expectOk(c.call(Frame.of(tid++, Code.INIT.value(), Session.VERSION)));
            for (int j = 0; j < 32; j++) {
                expectOk(c.call(start(tid++, "other" + j)));
            }
            expectOk(c.call(start(tid++, "7")));
            long[] start = new long[rounds];
            long[] grow = new long[rounds];
            long[] shrink = new long[rounds];
            long[] release = new long[rounds];
            for (int w = 0; w < 2; w++) { // warm-up, then measured
                for (int r = 0; r < rounds; r++) {
                    long t0 = System.nanoTime();
                    expectOk(c.call(start(tid++, "s" + r)));
                    start[r] = System.nanoTime() - t0;
                    expectOk(c.call(Frame.of(tid++, Code.JOB_END.value(), "{\"job\":\"s" + r + "\"}")));
                    t0 = System.nanoTime();
                    List<Frame> g = c.call(Frame.of(tid++, Code.REALLOC.value(), "{\"job\":\"7\",\"add\":\"gpu=1\"}"));
                    grow[r] = System.nanoTime() - t0;
                    String added = success(g);
                    t0 = System.nanoTime();
                    success(c.call(Frame.of(tid++, Code.REALLOC.value(), "{\"job\":\"7\",\"ids\":{\"node01\":{\"gpu\":[\""
                            + added + "\"]}}}")));
                    shrink[r] = System.nanoTime() - t0;
                    t0 = System.nanoTime();
                    expectOk(c.call(Frame.of(tid++, Code.RELEASE.value(), "{\"job\":\"7\"}")));
                    release[r] = System.nanoTime() - t0;
                }
            }
            double s50 = pct(start, 50);
            double s99 = pct(start, 99);
            System.out.printf("REALLOC round trip against JOB_START's, one client, %d rounds, gpu=64 with 33 jobs; "
                    + "rsmapd JVM options %s%n", rounds, daemon.jvmOptions());
            System.out.printf("%-22s p50 %8.1f us  p99 %8.1f us%n", "JOB_START (baseline)", s50 / 1e3, s99 / 1e3);
            for (Object[] row : new Object[][] {{"REALLOC add gpu=1", grow}, {"REALLOC take-away ids", shrink},
                    {"RELEASE", release}}) {
                long[] t = (long[]) row[1];
                System.out.printf("%-22s p50 %8.1f us  p99 %8.1f us  ratio to JOB_START p50 %.2fx, p99 %.2fx%n", row[0],
                        pct(t, 50) / 1e3, pct(t, 99) / 1e3, pct(t, 50) / s50, pct(t, 99) / s99);
            }
        } finally {
            rsmap.daemon.Trees.delete(dir);
        }
    }

    private static Frame start(long tid, String job) {
        return Frame.of(tid, Code.JOB_START.value(), "{\"job\":\"" + job + "\",\"user\":\"bench\",\"request\":\"gpu=1\"}");
    }

    private static void expectOk(List<Frame> answer) {
        if (answer.isEmpty() || answer.get(answer.size() - 1).code() != Code.OK.value()) {
            throw new IllegalStateException("not OK: " + answer);
        }
    }

    /** The identifier a SUCCESS added (empty for a take-away); anything else is an error. */
    private static String success(List<Frame> answer) {
        expectOk(answer);
        Frame alloc = answer.get(0);
        if (alloc.code() != Code.ALLOC.value() || !alloc.text(1).equals("0")) {
            throw new IllegalStateException("not a SUCCESS: " + answer);
        }
        try {
            return new com.fasterxml.jackson.databind.ObjectMapper().readTree(alloc.text(0)).path("added").path("node01")
                    .path("gpu").path(0).asText();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static double pct(long[] t, int p) {
        long[] s = t.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1)];
    }
}
