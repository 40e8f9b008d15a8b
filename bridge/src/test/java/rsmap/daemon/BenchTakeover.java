// The takeover benchmark's work (rsmap.bench.Takeover runs it): two authority processes on one state
// directory with a real munged, one host naming both, a client granting global seats through the host
// without pause; the active SIGKILLed 20 times, each time the time to the standby's first global grant.
package rsmap.daemon;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import rsmap.daemon.config.Config;
import rsmap.munge.MungeD;
import rsmap.wire.Client;
import rsmap.wire.Code;
import rsmap.wire.Polls;
import rsmap.wire.Ports;

/**
 * Per takeover: the ms from the SIGKILL of the active to the standby answering QUERY as the active
 * ("serves"), and to the first JOB_START with a global part that succeeds through the host ("grant":
 * takeover, replay, bind, and the host's reconnect). The killed one is restarted as the standby before
 * the next. Args: {@code [TAKEOVERS [TAKEOVER_TIMEOUT_S]]} (defaults 20 and 10, rsmapd.conf's default).
 */
public final class BenchTakeover {
    private static final ObjectMapper JSON = new ObjectMapper();

    private BenchTakeover() {
    }

    public static void main(String[] args) throws Exception {
        int takeovers = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int timeout = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        Path root = Files.createTempDirectory("rsmap-bench-takeover");
        Files.setPosixFilePermissions(root, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Map<String, Process> running = new ConcurrentHashMap<>();
        try (MungeD munged = MungeD.start()) {
            Map<String, Integer> ports = Map.of("A", Ports.free(), "B", Ports.free());
            for (String n : List.of("A", "B")) {
                Path d = Files.createDirectories(root.resolve(n));
                Files.copy(Path.of("..", "examples", "complexes"), d.resolve("complexes"));
                Files.writeString(d.resolve("rsmapd.conf"), String.join("\n", List.of("complexes = complexes",
                        "role = authority", "listen = 127.0.0.1:" + ports.get(n), "global_complex_values = lic=4(la lb lc ld)",
                        "socket = rsmapd.sock", "state_dir = " + root.resolve("state"), "admin_user = root",
                        "reconcile_interval = 0", "munge_socket = " + munged.socket(), "takeover_timeout = " + timeout))
                        + "\n");
            }
            running.put("A", start(root, "A"));
            waitFor(root, "A", "active");
            running.put("B", start(root, "B"));
            waitFor(root, "B", "standby");
            Config host = TestDaemon.config(root.resolve("node01"), "gpu=2(0 1)", "authority = 127.0.0.1:" + ports.get("A")
                    + ",127.0.0.1:" + ports.get("B"), "munge_socket = " + munged.socket(), "reconcile_interval = 0");
            try (Daemon d = TestDaemon.start(host)) {
                java.util.concurrent.atomic.AtomicReference<long[]> lastGrant = new java.util.concurrent.atomic
                        .AtomicReference<>(new long[] {0, 0});
                java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
                Thread client = granting(host.socket(), lastGrant, stop);
                long[] serves = new long[takeovers];
                long[] grants = new long[takeovers];
                String active = "A";
                for (int i = 0; i < takeovers; i++) {
                    String standby = active.equals("A") ? "B" : "A";
                    Thread.sleep(1_000); // the benchmark's gap: a second of grants flowing through the active
                    long killed = System.nanoTime();
                    running.get(active).destroyForcibly().waitFor();
                    waitFor(root, standby, "active");
                    serves[i] = (System.nanoTime() - killed) / 1_000_000;
                    // asked after the kill: granted by the standby (the figure is the grant's own time, not this wait's)
                    Polls.until("a grant asked after the kill", Duration.ofSeconds(60), () -> lastGrant.get()[0] >= killed);
                    grants[i] = (lastGrant.get()[1] - killed) / 1_000_000;
                    System.out.println("takeover " + (i + 1) + ": " + active + " killed, " + standby + " serves after "
                            + serves[i] + " ms, first global grant after " + grants[i] + " ms");
                    running.put(active, start(root, active));
                    waitFor(root, active, "standby");
                    active = standby;
                }
                stop.set(true);
                client.join(15_000); // no command in flight when the host closes
                Arrays.sort(serves);
                Arrays.sort(grants);
                System.out.printf("Takeover (%d SIGKILLs of the active, takeover_timeout %d s): serves p50 %d ms p99 %d"
                        + " ms; first global grant p50 %d ms p99 %d ms%n", takeovers, timeout, serves[takeovers / 2],
                        serves[Math.min(takeovers - 1, (int) Math.ceil(takeovers * 0.99) - 1)], grants[takeovers / 2],
                        grants[Math.min(takeovers - 1, (int) Math.ceil(takeovers * 0.99) - 1)]);
            }
        } finally {
            running.values().forEach(p -> p.destroyForcibly());
            if (System.getenv("RSMAP_BENCH_LOGS") != null) { // the authorities' logs, to see a takeover's lines
                for (String n : List.of("A", "B")) {
                    Path log = root.resolve(n).resolve("log");
                    System.out.println("--- " + n + "\n" + (Files.exists(log) ? Files.readString(log) : ""));
                }
            }
            Trees.delete(root);
        }
    }

    private static Process start(Path root, String n) throws Exception {
        Path d = root.resolve(n);
        Files.deleteIfExists(d.resolve("rsmapd.sock"));
        return new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "--config",
                d.resolve("rsmapd.conf").toString()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(d.resolve("log").toFile())).start();
    }

    /** Until authority {@code n} answers QUERY in {@code role} ("active" or "standby"). */
    private static void waitFor(Path root, String n, String role) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        Exception last = null;
        while (System.nanoTime() < end) {
            try (Client c = Client.connect(root.resolve(n).resolve("rsmapd.sock"), Duration.ofSeconds(2))) {
                String r = JSON.readTree(c.call(Code.QUERY, "{\"cluster\":true}").get(0).text(0)).path("role")
                        .asText("active");
                if (r.equals(role)) {
                    return;
                }
            } catch (Exception e) {
                last = e; // not serving yet
            }
            Thread.sleep(2); // 2 ms steps, not Polls' 10: the takeover's figure is taken when this wait ends
        }
        throw new IllegalStateException(n + " is not " + role + " after 60 s (" + last + "): " + Files.readString(root.resolve(n)
                .resolve("log")));
    }

    /** Global grants through the host without pause; {@code last}: when the latest was asked and answered. */
    private static Thread granting(Path socket, java.util.concurrent.atomic.AtomicReference<long[]> last,
                                   java.util.concurrent.atomic.AtomicBoolean stop) {
        Thread t = new Thread(() -> {
            long job = 1;
            while (!stop.get()) {
                try (Client c = Client.connect(socket, Duration.ofSeconds(10))) {
                    while (!stop.get()) {
                        long asked = System.nanoTime();
                        try {
                            c.call(Code.JOB_START, "{\"job\":\"" + job + "\",\"user\":\"root\",\"request\":\"lic=1\"}");
                            last.set(new long[] {asked, System.nanoTime()});
                            c.call(Code.JOB_END, "{\"job\":\"" + job + "\"}");
                            job++;
                        } catch (Client.Refusal e) {
                            Thread.sleep(2); // no authority now: the prolog would reschedule
                        }
                    }
                } catch (InterruptedException e) {
                    return;
                } catch (Exception e) {
                    // reconnect
                }
            }
        }, "bench-grants");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
