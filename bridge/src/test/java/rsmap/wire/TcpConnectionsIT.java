// "10,000 host connections must not need 10,000 threads". A server in this JVM holds 10,000
// logged-in TCP connections from a child JVM (TcpHosts: one process cannot hold both ends under ulimit -n
// 20,000), serves a command on every one of them, and keeps its thread count small throughout.
package rsmap.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(300)
class TcpConnectionsIT {
    static final int HOSTS = 10_000;
    /** The whole JVM's threads: the server's few, the JVM's own, and the test runner's. */
    static final int MAX_THREADS = 64;

    @Test
    void tenThousandLoggedInConnections_areServed_byAFewThreads() throws Exception {
        AtomicLong logins = new AtomicLong();
        Authenticator hosts = credential -> {
            if (!credential.startsWith("host ")) {
                throw new Authenticator.Refused("not a host: " + credential);
            }
            logins.incrementAndGet();
            return new Session.Peer("rsmap", "rsmap", 990, 990, 0); // every host daemon runs as the daemon user
        };
        // The daemon user is privileged, as on an authority: else its 10,000 connections break the per-user limit.
        // The peak of this test, not of the ITs before it in this JVM (an authority's 64 workers, say).
        ManagementFactory.getThreadMXBean().resetPeakThreadCount();
        try (SocketServer server = SocketServer.builder(SocketServerTest::handler)
                .tcp(TcpLoginTest.loopback(), hosts).privileged(p -> p.isRoot() || p.user().equals("rsmap"))
                .limits(ServerLimits.defaults().withLoginTimeout(Duration.ofSeconds(2))).start()) {
            Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:+UseSerialGC", "-Xmx512m", "-cp", System.getProperty("java.class.path"), TcpHosts.class.getName(),
                    "127.0.0.1", Integer.toString(server.tcpAddress().getPort()), Integer.toString(HOSTS), "5000", "2",
                    "host").redirectError(ProcessBuilder.Redirect.INHERIT).start();
            try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8)); Writer in = new OutputStreamWriter(child.getOutputStream(),
                    StandardCharsets.UTF_8)) {
                String ready = out.readLine();
                assertThat(ready).startsWith("ready connections=" + HOSTS);
                assertThat(logins).hasValue(HOSTS);
                int whileIdle = ManagementFactory.getThreadMXBean().getThreadCount();
                List<String> serverThreads = serverThreads();
                in.write("go\n"); // 5,000 QUERY a second for 2 s: one on every connection
                in.flush();
                Map<String, String> done = keyValues(out.readLine());
                int underLoad = ManagementFactory.getThreadMXBean().getPeakThreadCount();
                System.out.printf("TcpConnectionsIT: %s; %s; JVM threads idle %d, peak %d; server threads %s%n", ready,
                        done, whileIdle, underLoad, serverThreads);
                assertThat(done).containsEntry("answered", Integer.toString(HOSTS)).containsEntry("errors", "0")
                        .containsEntry("closed", "0");
                assertThat(serverThreads).as("the server's own: the selector, the workers, the accept thread")
                        .hasSize(ServerLimits.DEFAULT_WORKERS + 2);
                assertThat(underLoad).as("threads of the whole JVM, at their peak").isLessThan(MAX_THREADS);
                assertThat(server.counters().accepted()).isEqualTo(HOSTS);
                assertThat(server.counters().refused() + server.counters().timedOut() + server.counters().shed()).isZero();
                // Timeouts are checked a slice of the connections a tick (SelectorLoop.SWEEP_SLICE): among
                // 10,000, a silent connect is still closed within a second of its login timeout.
                try (TestClient silent = new TestClient(server.tcpAddress())) {
                    long t0 = System.nanoTime();
                    assertThat(silent.next().text(0)).startsWith("not logged in within 2 s");
                    assertThat((System.nanoTime() - t0) / 1_000_000).as("ms").isBetween(1900L, 3500L);
                }
            } finally {
                child.getOutputStream().close();
                if (!child.waitFor(60, TimeUnit.SECONDS)) {
                    child.destroyForcibly();
                }
            }
        }
    }

    static List<String> serverThreads() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName).filter(n -> n.startsWith("rsmapd-"))
                .sorted().toList();
    }

    static Map<String, String> keyValues(String line) {
        assertThat(line).startsWith("done ");
        Map<String, String> m = new HashMap<>();
        for (String kv : line.substring(5).split(" ")) {
            int eq = kv.indexOf('=');
            m.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return m;
    }
}
