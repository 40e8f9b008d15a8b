// docs/health.md, "A sick card gets no new job", through execd-stub, the real hooks and cgroup v1 with a
// fake card shared two ways that the stand-in NVML reports: Xid 13 taints nothing; Xid 79 appended to the
// description's events_file taints both shares within 2 s; a new job asking for the card is rescheduled
// (prolog exit 99, naming the taint) while the job holding it keeps running; "health":"ok" clears it.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import rsmap.wire.Client;
import rsmap.wire.Code;

@Timeout(180)
class HealthIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    Path shared;
    Path hook;
    Path starter;
    String user;

    @BeforeEach
    void setUp() throws Exception {
        user = ExecdStubIT.jobUser();
        if (!Files.isRegularFile(Path.of("/sys/fs/cgroup/devices/devices.allow"))) {
            if ("true".equals(System.getenv("CI"))) {
                fail("no cgroup v1 devices controller at /sys/fs/cgroup/devices");
            }
            Assumptions.abort("no cgroup v1 devices controller at /sys/fs/cgroup/devices");
        }
        assertThat(GpuStub.LIBRARY).as("built by the native-stubs module").isRegularFile();
        shared = Files.createTempDirectory("rsmap-health", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxrwxrwx")));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
        ExecdStubIT.sh("chmod 1777 " + shared);
        hook = Files.copy(ExecdStubIT.HOOK, shared.resolve("rsmap-hook"));
        starter = Files.createSymbolicLink(shared.resolve("rsmap-starter"), Path.of("rsmap-hook"));
        Files.createDirectories(shared.resolve("dev"));
        ExecdStubIT.sh("mknod -m 666 " + shared.resolve("dev/nvidia0") + " c 195 0");
        describe("ok");
    }

    @AfterEach
    void tearDown() throws Exception {
        if (shared == null) {
            return;
        }
        try (Stream<Path> all = Files.walk(shared)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** One card with {@code health}, its events in shared/events. */
    private void describe(String health) throws Exception {
        String card = GpuStub.card(0, "NVIDIA A100-SXM4-80GB", false);
        card = card.substring(0, card.length() - 1) + ",\"health\":\"" + health + "\"}";
        String d = GpuStub.description(List.of(card));
        use(shared.resolve("nvml.json"), d.substring(0, d.length() - 1) + ",\"events_file\":\""
                + shared.resolve("events") + "\"}");
    }

    /**
     * Points the stand-in at {@code description}; a later change replaces the file atomically, so that
     * NVML, which reads it again at each call that reports health, never sees it half written.
     */
    static void use(Path file, String description) throws Exception {
        if (!Files.exists(file)) {
            GpuStub.use(file, description);
            return;
        }
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, description);
        Files.move(next, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    static void append(Path events, String line) throws Exception {
        Files.writeString(events, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /** Each share's health of gpu in QUERY. */
    static List<String> health(Config config) throws Exception {
        try (Client c = Client.connect(config.socket())) {
            JsonNode q = JSON.readTree(c.call(Code.QUERY).get(0).text(0));
            List<String> out = new ArrayList<>();
            q.path("maps").path("gpu").path("instances").forEach(i -> out.add(i.path("health").isObject()
                    ? i.path("health").path("source").asText() + ": " + i.path("health").path("reason").asText()
                    : i.path("health").asText()));
            return out;
        }
    }

    private Process job(Config config, String id, String script) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(ExecdStubIT.STUB.toString(), "--spool",
                shared.resolve("spool").toString(), "--host", "node01", "--job", id, "--cwd", "/", "--tmpdir",
                shared.toString(), "--user", user, "--prolog", "root@" + hook + " prolog", "--starter",
                starter.toString(), "--epilog", "root@" + hook + " epilog", "--", "sh", "-c", script));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("RSMAP_SOCKET", config.socket().toString());
        pb.environment().put("RSMAP_REQUEST", "gpu=1");
        return pb.start();
    }

    private static String output(Process p) throws Exception {
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("the job ends").isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8) + "exit=" + p.exitValue();
    }

    @Test
    void anXid79_taintsBothShares_reschedulesANewJob_keepsTheHolderRunning_andHealthOkClearsIt() throws Exception {
        Config config = TestDaemon.config(shared.resolve("d"), "NONE", "device_backend = cgroup-v1",
                "socket_mode = 0666", "reconcile_interval = 0", "nvml_library = " + GpuStub.LIBRARY, "gpu_map = gpu",
                "gpu_shares = 2", "gpu_dev_dir = " + shared.resolve("dev"), "health_interval = 1");
        Path events = shared.resolve("events");
        Path release = shared.resolve("release");
        String holder = ProcessHandle.current().pid() + "1";
        try (Daemon daemon = TestDaemon.start(config)) {
            Process a = job(config, holder, "echo \"hgr=$SGE_HGR_gpu\"; " + ExecdStubIT.waitFor(release));
            for (int i = 0; i < 1200 && !daemon.jobs().containsKey(holder) && a.isAlive(); i++) {
                Thread.sleep(50);
            }
            assertThat(daemon.jobs()).containsKey(holder);
            append(events, "{\"uuid\":\"" + GpuStub.uuid(0) + "\",\"type\":\"xid\",\"xid\":13}");
            Thread.sleep(500);
            assertThat(health(config)).as("Xid 13 is the application's fault").containsExactly("ok", "ok");
            assertThat(daemon.log()).anyMatch(l -> l.contains("Xid 13") && l.contains("nothing tainted"));

            // a real socket's event stream (root's: a job owner's sees the same for its own job, HealthDaemonTest)
            List<String> diffs = java.util.Collections.synchronizedList(new ArrayList<>());
            rsmap.wire.TestClient stream = new rsmap.wire.TestClient(config.socket());
            stream.call(rsmap.wire.Frame.of(1, Code.INIT.value(), rsmap.wire.Session.VERSION));
            stream.send(rsmap.wire.Frame.of(2, Code.START_EVENTS.value()).encode());
            Thread reader = new Thread(() -> {
                try {
                    for (rsmap.wire.Frame f = stream.next(); f != null; f = stream.next()) {
                        if (f.code() == Code.DIFF.value()) {
                            diffs.add(f.text(0));
                        }
                    }
                } catch (Exception e) {
                    // the stream closed with the test
                }
            });
            reader.setDaemon(true);
            reader.start();
            describe("failed");
            long appended = System.nanoTime();
            append(events, "{\"uuid\":\"" + GpuStub.uuid(0) + "\",\"type\":\"xid\",\"xid\":79}");
            List<String> h = health(config);
            while (!h.equals(List.of("nvml: Xid 79", "nvml: Xid 79")) && System.nanoTime() - appended < 5_000_000_000L) {
                Thread.sleep(10);
                h = health(config);
            }
            long ms = (System.nanoTime() - appended) / 1_000_000;
            assertThat(h).containsExactly("nvml: Xid 79", "nvml: Xid 79");
            assertThat(ms).as("tainted within 2 s").isLessThan(2000);
            assertThat(daemon.log()).anyMatch(l -> l.contains("taint map=gpu id=0 source=nvml") && l.contains(holder));
            for (int i = 0; i < 100 && diffs.stream().noneMatch(d -> d.contains("\"event\":\"taint\"")); i++) {
                Thread.sleep(20);
            }
            assertThat(diffs).as("the event stream is told, with the job holding the card").anyMatch(d ->
                    d.contains("\"event\":\"taint\"") && d.contains("\"source\":\"nvml\",\"reason\":\"Xid 79\"")
                            && d.contains("\"jobs\":[\"" + holder + "\"]"));

            String refused = output(job(config, ProcessHandle.current().pid() + "2", "echo started"));
            assertThat(refused).as("rescheduled, naming the taint").contains("prolog asked to reschedule")
                    .contains("tainted: 0 (nvml: Xid 79 at ").doesNotContain("started\n").endsWith("exit=99");
            assertThat(a.isAlive()).as("the job holding the card keeps running").isTrue();
            Thread.sleep(1500);
            assertThat(health(config)).as("still failed at the recheck").containsExactly("nvml: Xid 79", "nvml: Xid 79");

            describe("ok");
            long cleared = System.nanoTime();
            while (!health(config).equals(List.of("ok", "ok")) && System.nanoTime() - cleared < 10_000_000_000L) {
                Thread.sleep(50);
            }
            assertThat(health(config)).as("cleared at the next check").containsExactly("ok", "ok");
            assertThat(output(job(config, ProcessHandle.current().pid() + "3", "echo \"hgr=$SGE_HGR_gpu\"")))
                    .contains("hgr=0\n").endsWith("exit=0");
            Files.writeString(release, "");
            assertThat(output(a)).contains("hgr=0\n").endsWith("exit=0");
            assertThat(diffs).anyMatch(d -> d.contains("\"event\":\"untaint\"") && d.contains("\"health\":\"ok\""));
            stream.close();
        }
    }
}
