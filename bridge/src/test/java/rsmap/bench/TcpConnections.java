// the authority's benchmark of the TCP server: 10,000 logged-in host connections (a child JVM, TcpHosts) to a
// server in a JVM with bin/rsmapd's options (TcpServer), a trivial command at 1,000 a second spread over
// them: its p99 latency (the target for a global grant: under 20 ms), and the server's RSS.
package rsmap.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import rsmap.wire.TcpHosts;

/**
 * The same rate over 16 connections first, as the baseline of the same run (after a warm-up that is not
 * reported), so that what 10,000 connections cost is the difference. {@code RSMAPD_JAVA_OPTS} replaces
 * the server's JVM options, as for the launcher. Args: {@code [CONNECTIONS [RATE [SECONDS [AUTH_MICROS
 * [MODE]]]]]} (default 10000 1000 30 0 query). MODE {@code grant}: the server is a real authority
 * ({@link rsmap.daemon.BenchAuthority}, its journal forced per grant) and every command is a global grant
 * of one seat (its JOB_END follows, not timed); {@code query}: a bare SocketServer answering QUERY.
 */
public final class TcpConnections {
    /** bin/rsmapd's options when RSMAPD_JAVA_OPTS is unset. */
    static final String DAEMON_OPTS = "-XX:+UseSerialGC -Xmx64m -Xmn8m -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError";
    static final double TARGET_P99_MS = 20;
    static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    private TcpConnections() {
    }

    public static void main(String[] args) throws Exception {
        int connections = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int rate = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 30;
        String authMicros = args.length > 3 ? args[3] : "0";
        String mode = args.length > 4 ? args[4] : "query";
        boolean grant = mode.equals("grant");
        String opts = System.getenv().getOrDefault("RSMAPD_JAVA_OPTS", DAEMON_OPTS);
        List<String> cmd = new ArrayList<>(pinned("RSMAP_BENCH_SERVER_CPUS"));
        cmd.add(JAVA);
        cmd.addAll(Arrays.asList(opts.trim().split("\\s+")));
        cmd.addAll(List.of("--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), grant ? rsmap.daemon.BenchAuthority.class.getName()
                : TcpServer.class.getName(), grant ? "256" : authMicros));
        Process server = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            String listening = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))
                    .readLine();
            if (listening == null || !listening.startsWith("listening ")) {
                throw new IllegalStateException("the server said " + listening);
            }
            int port = Integer.parseInt(listening.substring("listening ".length()));
            long pid = server.pid();
            long rssEmpty = Rsmapd.statusKiB(pid, "VmRSS");
            try (Hosts warm = Hosts.start(port, 16, rate, 5, mode)) {
                warm.go(); // the server's JIT compiles the command path; not reported
            }
            Map<String, String> base;
            try (Hosts few = Hosts.start(port, 16, rate, seconds, mode)) {
                base = few.go();
            }
            long rssBase = Rsmapd.statusKiB(pid, "VmRSS");
            Map<String, String> load;
            long rssIdle;
            long threadsIdle;
            long rssLoaded;
            long threadsLoaded;
            String ready;
            try (Hosts many = Hosts.start(port, connections, rate, seconds, mode)) {
                ready = many.ready;
                rssIdle = Rsmapd.statusKiB(pid, "VmRSS");
                threadsIdle = Rsmapd.statusKiB(pid, "Threads");
                load = many.go();
                rssLoaded = Rsmapd.statusKiB(pid, "VmRSS");
                threadsLoaded = Rsmapd.statusKiB(pid, "Threads");
            }
            long peak = Rsmapd.statusKiB(pid, "VmHWM");
            System.out.printf("TCP server: %d logged-in connections, %s at %d/s for %d s round robin;"
                    + " server JVM options %s; fake login %s us%n", connections, grant
                    ? "global grants of one seat by a real authority (JOB_START, journal forced; then JOB_END)"
                    : "QUERY (a bare OK)", rate, seconds, opts, authMicros);
            System.out.printf("  %-26s %s%n", "connect and log in:", ready);
            System.out.printf("  %-26s %s%n", "16 connections:", line(base));
            System.out.printf("  %-26s %s  target p99 < %.0f ms %s%n", connections + " connections:", line(load),
                    TARGET_P99_MS, us(load, "p99_us") / 1000.0 < TARGET_P99_MS ? "met" : "MISSED");
            System.out.printf("  server VmRSS: %.1f MiB serving nothing, %.1f MiB after the 16, %.1f MiB holding %d"
                    + " idle, %.1f MiB after the load (peak %.1f MiB; %.0f bytes per connection)%n", Rsmapd.mib(rssEmpty),
                    Rsmapd.mib(rssBase), Rsmapd.mib(rssIdle), connections, Rsmapd.mib(rssLoaded), Rsmapd.mib(peak),
                    (rssLoaded - rssBase) * 1024.0 / connections);
            System.out.printf("  server threads: %d holding %d idle, %d after the load%n", threadsIdle, connections,
                    threadsLoaded);
        } finally {
            server.getOutputStream().close();
            if (!server.waitFor(30, TimeUnit.SECONDS)) {
                server.destroyForcibly();
            }
        }
    }

    /**
     * {@code taskset -c CPUS} when the environment variable {@code name} names CPUs (the server's and the
     * load generator's apart, on a small machine), else nothing.
     */
    static List<String> pinned(String name) {
        String cpus = System.getenv(name);
        return cpus == null || cpus.isBlank() ? List.of() : List.of("taskset", "-c", cpus.trim());
    }

    private static String line(Map<String, String> m) {
        return String.format("p50 %6.2f ms  p99 %6.2f ms  p99.9 %6.2f ms  max %6.2f ms  (%s of %s answered, %s errors,"
                + " %s late sends)", us(m, "p50_us") / 1000.0, us(m, "p99_us") / 1000.0, us(m, "p999_us") / 1000.0,
                us(m, "max_us") / 1000.0, m.get("answered"), m.get("sent"), m.get("errors"), m.get("late"));
    }

    private static long us(Map<String, String> m, String key) {
        return Long.parseLong(m.get(key));
    }

    /** A TcpHosts child holding its connections. */
    private static final class Hosts implements AutoCloseable {
        private final Process process;
        private final BufferedReader out;
        private final Writer in;
        final String ready;

        private Hosts(Process process) throws IOException {
            this.process = process;
            this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            String line = out.readLine();
            if (line == null || !line.startsWith("ready ")) {
                process.destroyForcibly();
                throw new IllegalStateException("TcpHosts said " + line);
            }
            this.ready = line.substring("ready ".length());
        }

        static Hosts start(int port, int n, int rate, int seconds, String mode) throws IOException {
            List<String> cmd = new ArrayList<>(pinned("RSMAP_BENCH_LOAD_CPUS"));
            cmd.addAll(List.of(JAVA, "-XX:+UseSerialGC", "-Xmx512m", "-cp",
                    System.getProperty("java.class.path"), TcpHosts.class.getName(), "127.0.0.1", Integer.toString(port),
                    Integer.toString(n), Integer.toString(rate), Integer.toString(seconds), "host", mode));
            return new Hosts(new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start());
        }

        Map<String, String> go() throws IOException {
            in.write("go\n");
            in.flush();
            String line = out.readLine();
            if (line == null || !line.startsWith("done ")) {
                throw new IllegalStateException("TcpHosts said " + line);
            }
            Map<String, String> m = new HashMap<>();
            for (String kv : line.substring(5).split(" ")) {
                int eq = kv.indexOf('=');
                m.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
            return m;
        }

        @Override
        public void close() throws IOException {
            in.close();
            try {
                if (!process.waitFor(60, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
