// docs/gpus.md, "Health", against a daemon and the stand-in NVML: a card NVML reports sick at start is
// tainted (NVML taints are learnt again after a restart, never journaled), gpu_ignore_xids is the admin's
// list, a double-bit ECC error and a lost GPU taint, and a card healthy again is cleared one interval on.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Polls;
import rsmap.wire.Session;

@Timeout(60)
class GpuHealthTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;
    NvmlHost gpu;

    @BeforeEach
    void host() throws Exception {
        gpu = NvmlHost.in(tmp);
    }

    private void describe(String health0, String health1) throws Exception {
        List<String> cards = new ArrayList<>();
        String[] health = {health0, health1};
        for (int i = 0; i < 2; i++) {
            String c = GpuStub.card(i, "NVIDIA A100-SXM4-80GB", false);
            cards.add(c.substring(0, c.length() - 1) + ",\"health\":\"" + health[i] + "\"}");
        }
        gpu.describe(gpu.withEvents(GpuStub.description(cards)));
    }

    /** Each card's health: "ok" or "SOURCE: REASON". */
    private static List<String> health(Daemon d) throws Exception {
        Session s = DaemonSessions.as(d, "root", 0, 0, new ArrayList<>());
        JsonNode q = JSON.readTree(s.onCommand(Frame.of(2, Code.QUERY.value())).get(0).text(0));
        List<String> out = new ArrayList<>();
        for (JsonNode i : q.path("maps").path("gpu").path("instances")) {
            JsonNode h = i.path("health");
            out.add(h.isObject() ? h.path("source").asText() + ": " + h.path("reason").asText() : h.asText());
        }
        return out;
    }

    /** The cards' health once it is {@code wanted}, or as it is after {@code ms}. */
    private static List<String> until(Daemon d, List<String> wanted, long ms) throws Exception {
        return Polls.retry(Duration.ofMillis(ms), () -> health(d), wanted::equals);
    }

    @Test
    void sickAtStart_ignoredXids_doubleBitEcc_gpuLost_andHealthyAgain() throws Exception {
        describe("ok", "failed");
        Config c = gpu.config(tmp.resolve("d"), "NONE", "reconcile_interval = 0", "health_interval = 1",
                "gpu_ignore_xids = 79");
        try (Daemon d = TestDaemon.start(c)) {
            assertThat(until(d, List.of("ok", "nvml: row remapping pending (a reset is needed)"), 3000))
                    .as("a card NVML reports sick at start").containsExactly("ok",
                            "nvml: row remapping pending (a reset is needed)");
            gpu.event("{\"uuid\":\"" + GpuStub.uuid(0) + "\",\"type\":\"xid\",\"xid\":79}");
            gpu.event("{\"uuid\":\"" + GpuStub.uuid(1) + "\",\"type\":\"gpu_lost\"}");
            assertThat(until(d, List.of("ok", "nvml: GPU lost"), 3000)).containsExactly("ok", "nvml: GPU lost");
            assertThat(d.log()).anyMatch(l -> l.contains("Xid 79 on " + GpuStub.uuid(0)) && l.contains("gpu_ignore_xids"));
            gpu.event("{\"uuid\":\"" + GpuStub.uuid(0) + "\",\"type\":\"double_bit_ecc\"}");
            assertThat(until(d, List.of("nvml: double-bit ECC error", "nvml: GPU lost"), 3000))
                    .containsExactly("nvml: double-bit ECC error", "nvml: GPU lost");
            describe("ok", "ok");
            assertThat(until(d, List.of("ok", "ok"), 6000)).as("both healthy again, one interval on")
                    .containsExactly("ok", "ok");
            describe("ok", "failed");
            assertThat(until(d, List.of("ok", "nvml: row remapping pending (a reset is needed)"), 3000))
                    .containsExactly("ok", "nvml: row remapping pending (a reset is needed)");
        }
        try (Daemon d = TestDaemon.start(c)) {
            assertThat(until(d, List.of("ok", "nvml: row remapping pending (a reset is needed)"), 3000))
                    .as("learnt again from the card after a restart, not from the journal")
                    .containsExactly("ok", "nvml: row remapping pending (a reset is needed)");
        }
        describe("ok", "ok");
        try (Daemon d = TestDaemon.start(c)) {
            Thread.sleep(1500); // the thing tested: in the restart's first 1.5 s no NVML taint comes back from disk
            assertThat(health(d)).as("nothing of NVML was journaled").containsExactly("ok", "ok");
        }
    }

    /** One card NVML reports sick, with {@code more} (JSON members) in its description; a daemon's config. */
    private Config sickCard(String more) throws Exception {
        String c0 = GpuStub.card(0, "NVIDIA A100-SXM4-80GB", false);
        String d = GpuStub.description(List.of(c0.substring(0, c0.length() - 1) + ",\"health\":\"failed\"," + more + "}"));
        gpu.describe(gpu.withEvents(d));
        return gpu.config(tmp.resolve("d"), "NONE", "reconcile_interval = 0");
    }

    /**
     * docs/health.md: a restart learns a card's sickness "by the recheck at start" - before it serves: the
     * first JOB_START after the start never gets the sick card, however slow NVML answers (here 400 ms).
     */
    @Test
    void sickAtStart_tainted_beforeTheFirstJobStartIsServed_evenWithASlowDriver() throws Exception {
        try (Daemon daemon = TestDaemon.start(sickCard("\"health_delay_ms\":400"))) {
            List<Frame> a = DaemonSessions.as(daemon, "root", 0, 0, new ArrayList<>()).onCommand(Frame.of(2,
                    Code.JOB_START.value(), "{\"job\":\"1\",\"user\":\"root\",\"request\":\"gpu=1\"}"));
            assertThat(a.get(0).code()).as(a.toString()).isEqualTo(Code.ERROR.value());
            assertThat(a.get(0).text(0)).contains("row remapping pending");
        }
    }

    /** docs/gpus.md, "Health": every card is asked at the recheck, also one that tells no event. */
    @Test
    void aCardThatTellsNoEvent_isStillRechecked_andTaintedWhenSick() throws Exception {
        try (Daemon daemon = TestDaemon.start(sickCard("\"events\":false"))) {
            assertThat(daemon.log()).anyMatch(l -> l.contains("supports none of the events of a sick card"));
            assertThat(health(daemon)).containsExactly("nvml: row remapping pending (a reset is needed)");
        }
    }

    /**
     * The event thread failing (a driver in trouble) leaves the recheck working: no card is tainted for the
     * NVML session it lost, and a card that turns sick later is still noticed, every health_interval.
     */
    @Test
    void theEventWaitFailing_taintsNoHealthyCard_andTheRecheckGoesOn() throws Exception {
        describe("ok", "ok");
        Config c = gpu.config(tmp.resolve("d"), "NONE", "reconcile_interval = 0", "health_interval = 1");
        try (Daemon d = TestDaemon.start(c)) {
            gpu.event("{\"type\":\"wait_error\"}");
            Polls.await(Duration.ofSeconds(5), () -> d.log().stream().anyMatch(l -> l.contains("noticed by the recheck only")));
            assertThat(d.log()).anyMatch(l -> l.contains("NVML events: ") && l.contains("noticed by the recheck only"));
            Thread.sleep(2_500); // the thing tested: two rounds of the recheck taint nothing
            assertThat(health(d)).as("no card tainted for the lost event thread").containsExactly("ok", "ok");
            describe("ok", "failed");
            assertThat(until(d, List.of("ok", "nvml: row remapping pending (a reset is needed)"), 4000))
                    .containsExactly("ok", "nvml: row remapping pending (a reset is needed)");
        }
    }

    /** A driver that gives no event set: the recheck still asks every card, and a sick one is tainted at start. */
    @Test
    void noEventSet_theRecheckStillTaintsASickCard() throws Exception {
        String c0 = GpuStub.card(0, "NVIDIA A100-SXM4-80GB", false);
        String d = GpuStub.description(List.of(c0.substring(0, c0.length() - 1) + ",\"health\":\"failed\"}"));
        gpu.describe(d.substring(0, d.length() - 1) + ",\"event_set_refused\":true}");
        Config c = gpu.config(tmp.resolve("d"), "NONE", "reconcile_interval = 0");
        try (Daemon daemon = TestDaemon.start(c)) {
            assertThat(daemon.log()).anyMatch(l -> l.contains("nvmlEventSetCreate") && l.contains("no card is watched"));
            assertThat(health(daemon)).containsExactly("nvml: row remapping pending (a reset is needed)");
        }
    }
}
