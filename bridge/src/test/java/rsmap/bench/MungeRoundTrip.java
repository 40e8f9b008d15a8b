// the authority's cost of a munge credential: encode plus decode against a local munged (MungeD), one after another.
package rsmap.bench;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import rsmap.munge.Munge;
import rsmap.munge.MungeAuthenticator;
import rsmap.munge.MungeD;

/**
 * What a host pays per authority connection (one encode) and the authority per accepted one (one decode),
 * through Munge and libmunge, each round trip a fresh credential with the authority's purpose payload.
 * Args: {@code [ROUND_TRIPS]} (default 20000, after 2000 not reported). Run:
 * {@code mvn -B -q -Pbench -DskipTests -pl bridge -am pre-integration-test -Dbench.main=rsmap.bench.MungeRoundTrip}.
 */
public final class MungeRoundTrip {
    private MungeRoundTrip() {
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        byte[] payload = MungeAuthenticator.purpose("authority01").getBytes(StandardCharsets.UTF_8);
        try (MungeD munged = MungeD.start()) {
            Munge munge = munged.munge();
            run(munge, payload, 2000);
            long[][] t = run(munge, payload, n);
            System.out.printf("munge round trip against a local munged, %d sequential, payload %d bytes, credential "
                    + "%d characters%n", n, payload.length, munge.encode(payload).length());
            System.out.printf("%-16s %9s %9s %9s%n", "", "p50 us", "p99 us", "per s");
            print("encode", t[0]);
            print("decode", t[1]);
            print("encode+decode", t[2]);
        }
    }

    /** Nanoseconds of each encode, decode and both, per round trip. */
    private static long[][] run(Munge munge, byte[] payload, int n) throws Exception {
        long[][] t = new long[3][n];
        for (int i = 0; i < n; i++) {
            long a = System.nanoTime();
            String cred = munge.encode(payload);
            long b = System.nanoTime();
            munge.decode(cred);
            long c = System.nanoTime();
            t[0][i] = b - a;
            t[1][i] = c - b;
            t[2][i] = c - a;
        }
        return t;
    }

    private static void print(String what, long[] nanos) {
        long[] s = nanos.clone();
        Arrays.sort(s);
        double p50 = s[s.length / 2] / 1e3;
        double p99 = s[(int) Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)] / 1e3;
        double perSecond = s.length / (Arrays.stream(s).sum() / 1e9);
        System.out.printf("%-16s %9.1f %9.1f %9.0f%n", what, p50, p99, perSecond);
    }
}
