// Issue 5: SIGKILL of rsmapd during a burst of 200 job starts through rsmap-hook, then a restart: every
// grant a hook saw answered is still held, and no instance is held twice.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

@Timeout(300)
class KillDuringBurstTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int JOBS = 200;
    @TempDir
    Path tmp;

    /** rsmapd as a process of its own, as systemd runs it. */
    private Process daemonProcess(Path conf, Path socket) throws Exception {
        Files.deleteIfExists(socket);
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-XX:+UseSerialGC", "-cp",
                System.getProperty("java.class.path"), Main.class.getName(), "--config", conf.toString())
                .redirectErrorStream(true).redirectOutput(tmp.resolve("rsmapd.log").toFile()).start();
        for (int i = 0; i < 600 && !Files.exists(socket); i++) {
            assertThat(p.isAlive()).as(Files.readString(tmp.resolve("rsmapd.log"))).isTrue();
            Thread.sleep(50);
        }
        assertThat(socket).exists();
        return p;
    }

    @Test
    void sigkillDuringABurstOfJobStarts_losesNoAnsweredGrant_andDoublesNone() throws Exception {
        StringBuilder ids = new StringBuilder();
        for (int i = 0; i < JOBS; i++) {
            ids.append(i == 0 ? "" : " ").append("g").append(i);
        }
        Config config = TestDaemon.config(tmp, "gpu=" + JOBS + "(" + ids + ")", "reconcile_interval = 0");
        Path conf = tmp.resolve("rsmapd.conf");
        Process daemon = daemonProcess(conf, config.socket());
        Map<String, String> answered = new ConcurrentHashMap<>(); // job -> the SGE_HGR_gpu line its hook printed
        AtomicInteger done = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        int killAfter = 60 + new java.util.Random(5).nextInt(80);
        for (int i = 0; i < JOBS; i++) {
            String job = Integer.toString(1000 + i);
            pool.execute(() -> {
                try {
                    ProcessBuilder pb = new ProcessBuilder(RsmapHookTest.HOOK.toAbsolutePath().toString(), "prolog");
                    pb.environment().clear();
                    pb.environment().putAll(Map.of("RSMAP_SOCKET", config.socket().toString(), "JOB_ID", job,
                            "SGE_TASK_ID", "undefined", "NSLOTS", "1", "USER", "alice", "RSMAP_REQUEST", "gpu=1"));
                    Process h = pb.redirectError(ProcessBuilder.Redirect.DISCARD).start();
                    String out = new String(h.getInputStream().readAllBytes()).strip();
                    if (h.waitFor(60, TimeUnit.SECONDS) && h.exitValue() == 0) {
                        answered.put(job, out);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                } finally {
                    done.incrementAndGet();
                }
            });
        }
        while (answered.size() < killAfter && done.get() < JOBS) {
            Thread.sleep(1);
        }
        daemon.destroyForcibly(); // SIGKILL, mid-burst
        daemon.waitFor();
        pool.shutdown();
        assertThat(pool.awaitTermination(120, TimeUnit.SECONDS)).isTrue();
        assertThat(answered.size()).as("some starts were answered before the kill, some not").isBetween(killAfter, JOBS - 1);

        Process again = daemonProcess(conf, config.socket());
        try (TestClient c = new TestClient(config.socket())) {
            assertThat(c.call(Frame.of(1, Code.INIT.value(), Session.VERSION))).containsExactly(Session.ok(1));
            JsonNode q = JSON.readTree(c.call(Frame.of(2, Code.QUERY.value())).get(0).text(0));
            Map<String, String> held = new HashMap<>(); // job -> its instance
            Set<String> instances = new HashSet<>();
            for (JsonNode i : q.path("maps").path("gpu").path("instances")) {
                if (!i.path("holder").asText().isEmpty()) {
                    assertThat(held.put(i.path("holder").asText(), i.path("id").asText())).as("one instance per job")
                            .isNull();
                    assertThat(instances.add(i.path("id").asText())).as("no instance twice").isTrue();
                }
            }
            List<String> lost = new ArrayList<>();
            answered.forEach((job, line) -> {
                if (!line.equals("SGE_HGR_gpu=" + held.get(job))) {
                    lost.add(job + " saw " + line + ", held " + held.get(job));
                }
            });
            assertThat(lost).as("grants the hooks saw answered").isEmpty();
            // Jobs granted and journaled whose answer the kill cut off may be held too: never more than were asked.
            assertThat(held.size()).isBetween(answered.size(), JOBS);
        } finally {
            again.destroy();
            again.waitFor(20, TimeUnit.SECONDS);
        }
    }
}
