// docs/health.md, "A sick card gets no new job", through execd-stub, the real hooks and cgroup v1 with a
// fake card shared two ways that the stand-in NVML reports: Xid 13 taints nothing; Xid 79 appended to the
// description's events_file taints both shares within 2 s; a new job asking for the card is rescheduled
// (prolog exit 99, naming the taint) while the job holding it keeps running; "health":"ok" clears it.
package rsmap.daemon.health;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import rsmap.daemon.Daemon;
import rsmap.daemon.ExecdCell;
import rsmap.daemon.GpuStub;
import rsmap.daemon.NvmlHost;
import rsmap.daemon.TestDaemon;
import rsmap.daemon.config.Config;
import rsmap.wire.Client;
import rsmap.wire.Code;
import rsmap.wire.Polls;

@Timeout(180)
class HealthIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    ExecdCell cell;

    @BeforeEach
    void setUp() throws Exception {
        cell = ExecdCell.nvml("rsmap-health");
        cell.gpus(1);
        describe("ok");
    }

    @AfterEach
    void tearDown() throws Exception {
        if (cell != null) {
            cell.close();
        }
    }

    /** One card with {@code health}, its events in the cell's file events. */
    private void describe(String health) throws Exception {
        String card = GpuStub.card(0, "NVIDIA A100-SXM4-80GB", false);
        card = card.substring(0, card.length() - 1) + ",\"health\":\"" + health + "\"}";
        cell.gpu().describe(cell.gpu().withEvents(GpuStub.description(List.of(card))));
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
        return cell.job(config, id, "gpu=1", script);
    }

    @Test
    void anXid79_taintsBothShares_reschedulesANewJob_keepsTheHolderRunning_andHealthOkClearsIt() throws Exception {
        Config config = cell.gpuConfig("gpu_shares = 2", "health_interval = 1");
        NvmlHost gpu = cell.gpu();
        Path release = cell.marker("release");
        String holder = ProcessHandle.current().pid() + "1";
        try (Daemon daemon = TestDaemon.start(config)) {
            Process a = job(config, holder, "echo \"hgr=$SGE_HGR_gpu\"; " + ExecdCell.waitFor(release));
            Polls.await(Duration.ofSeconds(60), () -> daemon.jobs().containsKey(holder) || !a.isAlive());
            assertThat(daemon.jobs()).containsKey(holder);
            gpu.event("{\"uuid\":\"" + GpuStub.uuid(0) + "\",\"type\":\"xid\",\"xid\":13}");
            Thread.sleep(500); // the thing tested: half a second on, Xid 13 has tainted nothing
            assertThat(health(config)).as("Xid 13 is the application's fault").containsExactly("ok", "ok");
            assertThat(daemon.log()).anyMatch(l -> l.contains("Xid 13") && l.contains("nothing tainted"));

            // a real socket's event stream (root's: a job owner's sees the same for its own job, HealthDaemonTest)
            List<String> diffs = java.util.Collections.synchronizedList(new ArrayList<>());
            // START_EVENTS answers STATE first (docs/protocol.md): from then on the stream gets every change
            java.util.concurrent.CountDownLatch subscribed = new java.util.concurrent.CountDownLatch(1);
            rsmap.wire.TestClient stream = new rsmap.wire.TestClient(config.socket());
            stream.call(rsmap.wire.Frame.of(1, Code.INIT.value(), rsmap.wire.Session.VERSION));
            stream.send(rsmap.wire.Frame.of(2, Code.START_EVENTS.value()).encode());
            Thread reader = new Thread(() -> {
                try {
                    for (rsmap.wire.Frame f = stream.next(); f != null; f = stream.next()) {
                        if (f.code() == Code.STATE.value()) {
                            subscribed.countDown();
                        } else if (f.code() == Code.DIFF.value()) {
                            diffs.add(f.text(0));
                        }
                    }
                } catch (Exception e) {
                    // the stream closed with the test
                }
            });
            reader.setDaemon(true);
            reader.start();
            assertThat(subscribed.await(30, java.util.concurrent.TimeUnit.SECONDS)).as("the stream's STATE").isTrue();
            describe("failed");
            long appended = System.nanoTime();
            gpu.event("{\"uuid\":\"" + GpuStub.uuid(0) + "\",\"type\":\"xid\",\"xid\":79}");
            List<String> h = Polls.retry(Duration.ofSeconds(5), () -> health(config),
                    List.of("nvml: Xid 79", "nvml: Xid 79")::equals);
            long ms = (System.nanoTime() - appended) / 1_000_000;
            assertThat(h).containsExactly("nvml: Xid 79", "nvml: Xid 79");
            assertThat(ms).as("tainted within 2 s").isLessThan(2000);
            assertThat(daemon.log()).anyMatch(l -> l.contains("taint map=gpu id=0 source=nvml") && l.contains(holder));
            Polls.await(Duration.ofSeconds(2), () -> diffs.stream().anyMatch(d -> d.contains("\"event\":\"taint\"")));
            assertThat(diffs).as("the event stream is told, with the job holding the card").anyMatch(d ->
                    d.contains("\"event\":\"taint\"") && d.contains("\"source\":\"nvml\",\"reason\":\"Xid 79\"")
                            && d.contains("\"jobs\":[\"" + holder + "\"]"));

            String refused = ExecdCell.finish(job(config, ProcessHandle.current().pid() + "2", "echo started"));
            assertThat(refused).as("rescheduled, naming the taint").contains("prolog asked to reschedule")
                    .contains("tainted: 0 (nvml: Xid 79 at ").doesNotContain("started\n").endsWith("exit=99");
            assertThat(a.isAlive()).as("the job holding the card keeps running").isTrue();
            Thread.sleep(1500); // the thing tested: the recheck one interval on keeps the taint
            assertThat(health(config)).as("still failed at the recheck").containsExactly("nvml: Xid 79", "nvml: Xid 79");

            describe("ok");
            Polls.await(Duration.ofSeconds(10), () -> health(config).equals(List.of("ok", "ok")));
            assertThat(health(config)).as("cleared at the next check").containsExactly("ok", "ok");
            assertThat(ExecdCell.finish(job(config, ProcessHandle.current().pid() + "3", "echo \"hgr=$SGE_HGR_gpu\"")))
                    .contains("hgr=0\n").endsWith("exit=0");
            Files.writeString(release, "");
            assertThat(ExecdCell.finish(a)).contains("hgr=0\n").endsWith("exit=0");
            assertThat(diffs).anyMatch(d -> d.contains("\"event\":\"untaint\"") && d.contains("\"health\":\"ok\""));
            stream.close();
        }
    }
}
