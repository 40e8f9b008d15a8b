// A host's NVIDIA GPUs through the stand-in NVML (docs/gpus.md): gpu_map built from discovery (shares, ids
// by uuid), its facts and attributes in QUERY and MODEL_DEF, CUDA_VISIBLE_DEVICES from the grant, a
// hand-written map checked, a configuration that needs NVML refused without it, and RELOAD after a card
// was lost refusing to take away a card a running job holds.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

@Timeout(60)
class GpuDaemonTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;
    /** Daemons of one test: d, d1, d2, ... */
    int configs;

    /** A host whose gpu_map is built from the description (cards under tmp/dev, nvidiactl present). */
    private Config config(String description, String values, String... more) throws Exception {
        GpuStub.use(tmp.resolve("nvml.json"), description);
        Files.createDirectories(tmp.resolve("dev"));
        Files.writeString(tmp.resolve("dev/nvidiactl"), "");
        List<String> lines = new ArrayList<>(List.of("nvml_library = " + GpuStub.LIBRARY, "gpu_map = gpu",
                "gpu_dev_dir = " + tmp.resolve("dev"), "reconcile_interval = 0"));
        lines.addAll(List.of(more));
        Config c = TestDaemon.config(tmp.resolve(configs++ == 0 ? "d" : "d" + configs), values, lines.toArray(new String[0]));
        GpuStub.declareAll(c.complexes());
        return c;
    }

    private static List<Frame> call(Daemon d, Code code, String json) {
        Session s = DaemonSessions.as(d, "root", 0, 0, new ArrayList<>());
        return DaemonSessions.answered(s, json == null ? Frame.of(2, code.value()) : Frame.of(2, code.value(), json));
    }

    private static JsonNode query(Daemon d) throws Exception {
        return JSON.readTree(call(d, Code.QUERY, null).get(0).text(0));
    }

    private static JsonNode start(Daemon d, String job, String request) throws Exception {
        List<Frame> a = call(d, Code.JOB_START, "{\"job\":\"" + job + "\",\"user\":\"alice\",\"request\":\"" + request
                + "\"}");
        assertThat(a.get(0).code()).as(a.toString()).isEqualTo(Code.STATE.value());
        return JSON.readTree(a.get(0).text(0));
    }

    @Test
    void builtMap_oneInstancePerCard_withTheDeclaredCharacteristics_andTheFactsInQuery() throws Exception {
        Config c = config(GpuStub.cards(2), "NONE");
        try (Daemon d = TestDaemon.start(c)) {
            JsonNode q = query(d);
            JsonNode gpu = q.path("maps").path("gpu");
            assertThat(gpu.path("amount").asInt()).isEqualTo(2);
            JsonNode first = gpu.path("instances").get(0);
            assertThat(first.path("id").asText()).isEqualTo("0");
            assertThat(first.path("uuid").asText()).isEqualTo(GpuStub.uuid(0));
            assertThat(first.path("model").asText()).isEqualTo("NVIDIA_A100-SXM4-80GB");
            assertThat(first.path("memory").asText()).isEqualTo("81920M");
            assertThat(first.path("numa_node").asText()).isEqualTo("0");
            assertThat(first.path("pci").asText()).isEqualTo("00000000:3B:00.0");
            assertThat(first.path("compute_capability").asText()).isEqualTo("8.0");
            assertThat(first.path("devices").asText()).isEqualTo(tmp.resolve("dev/nvidia0") + ":rw;"
                    + tmp.resolve("dev/nvidiactl") + ":rw");
            assertThat(q.path("nvidia").path("driver").asText()).isEqualTo("550.54.15");
            assertThat(q.path("nvidia").path("cuda").asText()).isEqualTo("12.4");
            assertThat(q.path("nvidia").path("gpus").get(1).path("uuid").asText()).isEqualTo(GpuStub.uuid(1));
            List<Frame> model = call(d, Code.MODEL_DEF, null);
            assertThat(model.toString()).contains("host.nvidia").contains(GpuStub.uuid(1));
            java.io.StringWriter out = new java.io.StringWriter();
            int code = rsmap.cli.Main.run(new java.io.PrintWriter(out), new java.io.PrintWriter(new java.io.StringWriter()),
                    "status", "--socket", c.socket().toString());
            assertThat(code).isZero();
            assertThat(out.toString()).contains("nvidia driver 550.54.15, cuda 12.4, 2 gpus\n")
                    .contains("  gpu 1   " + GpuStub.uuid(1) + "  NVIDIA A100-SXM4-80GB  81920M  numa 0  pci "
                            + "00000000:3C:00.0  cc 8.0\n");
        }
    }

    @Test
    void eightCards_fourSharesEach_idsByUuid() throws Exception {
        try (Daemon d = TestDaemon.start(config(GpuStub.cards(8), "NONE", "gpu_shares = 4", "gpu_id = uuid"))) {
            JsonNode gpu = query(d).path("maps").path("gpu");
            assertThat(gpu.path("amount").asInt()).isEqualTo(32);
            List<String> ids = new ArrayList<>();
            gpu.path("instances").forEach(i -> ids.add(i.path("id").asText()));
            assertThat(ids.subList(0, 5)).containsExactly(GpuStub.uuid(0), GpuStub.uuid(0), GpuStub.uuid(0),
                    GpuStub.uuid(0), GpuStub.uuid(1));
            JsonNode a = start(d, "1", "gpu=2");
            assertThat(a.path("env").path("CUDA_VISIBLE_DEVICES").asText()).as("two shares of one card: named once")
                    .isEqualTo(GpuStub.uuid(0));
        }
    }

    @Test
    void aJobSeesItsCardsUuids_inGrantOrder_andAJobWithoutCardsSeesNone() throws Exception {
        try (Daemon d = TestDaemon.start(config(GpuStub.cards(3), "NONE"))) {
            JsonNode a = start(d, "1", "gpu=1[id=2]");
            assertThat(a.path("env").path("SGE_HGR_gpu").asText()).isEqualTo("2");
            assertThat(a.path("env").path("CUDA_VISIBLE_DEVICES").asText()).isEqualTo(GpuStub.uuid(2));
            JsonNode b = start(d, "2", "gpu=2");
            assertThat(b.path("env").path("CUDA_VISIBLE_DEVICES").asText())
                    .isEqualTo(GpuStub.uuid(0) + "," + GpuStub.uuid(1));
            assertThat(Files.readString(tmp.resolve("d/state/env/2"))).contains("CUDA_VISIBLE_DEVICES="
                    + GpuStub.uuid(0) + "," + GpuStub.uuid(1) + "\n");
        }
    }

    @Test
    void restart_replaysTheJob_withItsCardsVariable() throws Exception {
        Config c = config(GpuStub.cards(2), "NONE");
        try (Daemon d = TestDaemon.start(c)) {
            start(d, "1", "gpu=1[id=1]");
        }
        try (Daemon d = TestDaemon.start(c)) {
            assertThat(d.jobs().get("1").env()).containsEntry("CUDA_VISIBLE_DEVICES", GpuStub.uuid(1))
                    .containsEntry("SGE_HGR_gpu", "1");
            assertThat(query(d).path("generation").asInt()).as("the same cards: the same configuration").isEqualTo(1);
        }
    }

    @Test
    void reload_handWrittenMapNoLongerTheHardware_isRefusedInStrict() throws Exception {
        String values = "gpu=1(0[devices=" + tmp.resolve("dev/nvidia0") + ":rw,uuid=" + GpuStub.uuid(0) + "])";
        Config c = config(GpuStub.cards(1), values);
        try (Daemon d = TestDaemon.start(c)) {
            GpuStub.use(tmp.resolve("nvml.json"), GpuStub.description(List.of(GpuStub.card(7, "NVIDIA H200", false)
                    .replace("\"minor\":7", "\"minor\":0"))));
            List<Frame> refused = call(d, Code.RELOAD, null);
            assertThat(refused.get(0).code()).isEqualTo(Code.ERROR.value());
            assertThat(refused.get(0).text(0)).contains("gpu instance 0: uuid=" + GpuStub.uuid(0) + ", but "
                    + tmp.resolve("dev/nvidia0") + " is card 0 (uuid=" + GpuStub.uuid(7) + ", model=NVIDIA_H200");
        }
    }

    @Test
    void gpuEnvOff_orAnotherName() throws Exception {
        try (Daemon d = TestDaemon.start(config(GpuStub.cards(1), "NONE", "gpu_env = off"))) {
            assertThat(start(d, "1", "gpu=1").path("env").has("CUDA_VISIBLE_DEVICES")).isFalse();
        }
        try (Daemon d = TestDaemon.start(config(GpuStub.cards(1), "NONE", "gpu_env = NVIDIA_VISIBLE_DEVICES"))) {
            assertThat(start(d, "1", "gpu=1").path("env").path("NVIDIA_VISIBLE_DEVICES").asText()).isEqualTo(GpuStub.uuid(0));
        }
    }

    @Test
    void handWrittenMap_wrongMinor_isRefused_namingTheCardItReallyIs() throws Exception {
        String values = "gpu=2(0[devices=" + tmp.resolve("dev/nvidia1") + ":rw,uuid=" + GpuStub.uuid(0) + "] 1[devices="
                + tmp.resolve("dev/nvidia0") + ":rw,uuid=" + GpuStub.uuid(1) + "])";
        Config c = config(GpuStub.cards(2), values);
        assertThatThrownBy(() -> TestDaemon.start(c)).isInstanceOf(IOException.class)
                .hasMessageContaining("rsmapd.conf: line 3: complex_values: gpu instance 0: uuid=" + GpuStub.uuid(0)
                        + ", but " + tmp.resolve("dev/nvidia1") + " is card 1 (uuid=" + GpuStub.uuid(1))
                .hasMessageContaining("gpu instance 1: uuid=" + GpuStub.uuid(1) + ", but " + tmp.resolve("dev/nvidia0")
                        + " is card 0 (uuid=" + GpuStub.uuid(0))
                .hasMessageContaining("gpu_check: strict refuses");
    }

    @Test
    void handWrittenMap_noSuchMinor_warnStarts() throws Exception {
        String values = "gpu=1(0[devices=" + tmp.resolve("dev/nvidia5") + ":rw])";
        try (Daemon d = TestDaemon.start(config(GpuStub.cards(1), values, "gpu_check = warn"))) {
            assertThat(d.log()).anyMatch(l -> l.contains("gpu instance 0: devices= names " + tmp.resolve("dev/nvidia5")
                    + ", but no card has minor 5 (cards: card 0 (uuid=" + GpuStub.uuid(0)));
            assertThat(query(d).path("nvidia").has("driver")).isTrue();
        }
        String right = "gpu=1(0[devices=" + tmp.resolve("dev/nvidia0") + ":rw,memory=80G,model=NVIDIA_A100-SXM4-80GB])";
        try (Daemon d = TestDaemon.start(config(GpuStub.cards(1), right))) {
            assertThat(query(d).path("maps").path("gpu").path("amount").asInt()).isEqualTo(1);
        }
    }

    @Test
    void discoveryNeeded_withoutNvml_isRefusedAtStart_namingFileLineAndWhy() throws Exception {
        Config off = config(GpuStub.cards(1), "NONE", "nvml_library = off");
        Path conf = off.complexes().resolveSibling("rsmapd.conf");
        int line = Files.readAllLines(conf).indexOf("gpu_map = gpu") + 1;
        assertThatThrownBy(() -> TestDaemon.start(off)).isInstanceOf(IOException.class).hasMessage(
                conf + ": line " + line + ": gpu_map: complex_values has no entry for gpu, "
                        + "which is built from NVML, and there is none: nvml_library = off");
        Config broken = config("{\"init_error\":\"DRIVER_NOT_LOADED\"}", "NONE");
        assertThatThrownBy(() -> TestDaemon.start(broken)).isInstanceOf(IOException.class).hasMessageEndingWith(
                "and there is none: nvmlInit_v2: Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED)");
    }

    @Test
    void gpuMap_notAResourceMap_isRefused() throws Exception {
        Config c = config(GpuStub.cards(1), "NONE", "gpu_map = model");
        assertThatThrownBy(() -> TestDaemon.start(c)).isInstanceOf(IOException.class)
                .hasMessageContaining(": gpu_map: 'model' is not a resource map (type RSMAP) of the complex table");
    }

    @Test
    void withoutGpuMap_noNvml_startsAsBefore() throws Exception {
        Config c = TestDaemon.config(tmp.resolve("plain"), "gpu=2(0 1)", "nvml_library = " + tmp.resolve("none.so"),
                "reconcile_interval = 0");
        try (Daemon d = TestDaemon.start(c)) {
            JsonNode q = query(d);
            assertThat(q.has("nvidia")).isFalse();
            assertThat(start(d, "1", "gpu=1").path("env").has("CUDA_VISIBLE_DEVICES")).isFalse();
        }
    }

    @Test
    void reloadAfterACardWasLost_refusesWhileAJobHoldsIt_thenTakesItAway() throws Exception {
        Config c = config(GpuStub.cards(2), "NONE");
        try (Daemon d = TestDaemon.start(c)) {
            start(d, "1", "gpu=1[id=0]");
            start(d, "2", "gpu=1[id=1]");
            GpuStub.use(tmp.resolve("nvml.json"), GpuStub.description(List.of(
                    GpuStub.card(0, "NVIDIA A100-SXM4-80GB", false), GpuStub.card(1, "NVIDIA A100-SXM4-80GB", true))));
            List<Frame> refused = call(d, Code.RELOAD, null);
            assertThat(refused.get(0).code()).isEqualTo(Code.ERROR.value());
            assertThat(refused.get(0).text(0)).contains("job 2").contains("1");
            assertThat(query(d).path("maps").path("gpu").path("amount").asInt()).as("unchanged").isEqualTo(2);
            assertThat(call(d, Code.JOB_END, "{\"job\":\"2\"}").get(0).code()).isEqualTo(Code.OK.value());
            List<Frame> ok = call(d, Code.RELOAD, null);
            assertThat(ok.get(0).code()).as(ok.toString()).isEqualTo(Code.STATE.value());
            assertThat(query(d).path("maps").path("gpu").path("amount").asInt()).isEqualTo(1);
            assertThat(query(d).path("nvidia").path("gpus").size()).isEqualTo(1);
        }
    }
}
