// the daemon and its protocol's benchmark: protocol round trips (connect, INIT, then QUERY after QUERY) at 1, 16 and 256
// concurrent clients against rsmapd, beside a raw Unix-socket ping-pong in C measured in the same run
// (target: rsmapd's p99 under 10x the ping-pong's, and one client's p50 within 2x).
package rsmap.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

/**
 * The clients are the C program {@code target/pingpong} (src/test/c/pingpong.c) for both servers, so the
 * only difference is the server: rsmapd on the example host {@code examples/node01.complex_values}, or
 * {@code pingpong serve} answering every frame with as many bytes as rsmapd's QUERY answer, in one write.
 * Args: {@code [ROUND_TRIPS_PER_LEVEL]} (default 20000).
 */
public final class RoundTrip {
    static final int[] LEVELS = {1, 16, 256};
    static final Path PINGPONG = Path.of("target", "pingpong").toAbsolutePath();

    private RoundTrip() {
    }

    public static void main(String[] args) throws Exception {
        int perLevel = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        Path dir = Files.createTempDirectory("rsmap-bench-rt");
        Rsmapd.configure(dir, Files.readString(Rsmapd.ROOT.resolve("examples/node01.complex_values")));
        try (Rsmapd daemon = Rsmapd.start(dir)) {
            int answer = queryAnswerBytes(daemon.socket());
            Path pp = dir.resolve("pingpong.sock");
            List<String> serve = new java.util.ArrayList<>(TcpConnections.pinned("RSMAP_BENCH_SERVER_CPUS"));
            serve.addAll(List.of(PINGPONG.toString(), "serve", pp.toString(), Integer.toString(answer)));
            Process server = new ProcessBuilder(serve).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            try {
                String ready = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))
                        .readLine();
                if (ready == null || !ready.startsWith("ready")) {
                    throw new IllegalStateException("pingpong serve said " + ready);
                }
                // Warm-up, not reported: the daemon's JIT compiles the command path, both servers page in.
                clients(pp, 16, 2000);
                clients(daemon.socket(), 16, 2000);
                System.out.printf("round trip: connect, INIT, then QUERY round trips; the answer is %d bytes; "
                        + "rsmapd JVM options %s%n", answer, daemon.jvmOptions());
                System.out.printf("%7s %11s | %-32s | %-32s | %s%n", "clients", "round trips",
                        "C ping-pong p50 / p99 us, per s", "rsmapd p50 / p99 us, per s",
                        "ratio p50 / p99 (target p99 < 10x; 1 client p50 <= 2x)");
                for (int n : LEVELS) {
                    int rounds = Math.max(perLevel / n, 40);
                    Map<String, String> base = clients(pp, n, rounds);
                    Map<String, String> d = clients(daemon.socket(), n, rounds);
                    double b50 = num(base, "p50_us");
                    double b99 = num(base, "p99_us");
                    double d50 = num(d, "p50_us");
                    double d99 = num(d, "p99_us");
                    System.out.printf("%7d %11s | %8.1f / %8.1f, %7s/s | %8.1f / %8.1f, %7s/s | %5.1fx / %5.1fx %s%n", n,
                            d.get("round_trips"), b50, b99, base.get("per_s"), d50, d99, d.get("per_s"), d50 / b50,
                            d99 / b99, d99 / b99 < 10 && (n > 1 || d50 / b50 <= 2) ? "met" : "MISSED");
                }
            } finally {
                server.getOutputStream().close(); // pingpong serve exits when its stdin closes
                server.waitFor();
            }
        } finally {
            rsmap.daemon.Trees.delete(dir);
        }
    }

    /** Bytes of rsmapd's whole answer to a QUERY (STATE and OK), the size the ping-pong answers with. */
    static int queryAnswerBytes(Path socket) throws Exception {
        try (TestClient c = new TestClient(socket)) {
            c.call(Frame.of(1, Code.INIT.value(), Session.VERSION));
            List<Frame> answer = c.call(Frame.of(2, Code.QUERY.value(), "{}"));
            if (answer.get(answer.size() - 1).code() != Code.OK.value()) {
                throw new IllegalStateException("QUERY answered " + answer);
            }
            return answer.stream().mapToInt(f -> f.encode().length).sum();
        }
    }

    /** Runs {@code pingpong clients} and returns its key=value line. */
    static Map<String, String> clients(Path socket, int n, int rounds) throws IOException, InterruptedException {
        List<String> cmd = new java.util.ArrayList<>(TcpConnections.pinned("RSMAP_BENCH_LOAD_CPUS"));
        cmd.addAll(List.of(PINGPONG.toString(), "clients", socket.toString(), Integer.toString(n),
                Integer.toString(rounds), Integer.toString(Math.min(rounds, 20))));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String line = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("pingpong clients " + socket + " " + n + " failed: " + line);
        }
        Map<String, String> m = new HashMap<>();
        for (String kv : line.split(" ")) {
            int eq = kv.indexOf('=');
            m.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return m;
    }

    private static double num(Map<String, String> m, String key) {
        return Double.parseDouble(m.get(key));
    }
}
