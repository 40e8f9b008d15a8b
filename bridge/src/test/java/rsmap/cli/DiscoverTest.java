// rsmap discover against the stand-in NVML (docs/gpus.md, "Discover"): 0, 1 and 8 cards, shares and ids by
// uuid, the --json shape of the contract, a lost card, an init_error, and no NVML (exit 2, one line).
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.cli.MainTest.run;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.GpuStub;

class DiscoverTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;

    /** discover with the stand-in and no rsmapd.conf (a missing --config would be refused, so none is given). */
    private MainTest.Run discover(String description, String... more) throws Exception {
        GpuStub.use(tmp.resolve("nvml.json"), description);
        Path conf = Files.writeString(tmp.resolve("rsmapd.conf"), "complexes = complexes\ngpu_dev_dir = " + tmp
                + "\n");
        Files.writeString(tmp.resolve("complexes"), Files.readString(Path.of("..", "examples", "complexes")));
        GpuStub.declareAll(tmp.resolve("complexes"));
        String[] args = new String[more.length + 5];
        args[0] = "discover";
        args[1] = "--config";
        args[2] = conf.toString();
        args[3] = "--nvml-library";
        args[4] = GpuStub.LIBRARY.toString();
        System.arraycopy(more, 0, args, 5, more.length);
        return run(args);
    }

    @Test
    void oneCard_jsonHasTheContractsFields() throws Exception {
        MainTest.Run r = discover(GpuStub.cards(1), "--json");
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode o = JSON.readTree(r.out());
        assertThat(o.path("driver").asText()).isEqualTo("550.54.15");
        assertThat(o.path("cuda").asText()).isEqualTo("12.4");
        JsonNode g = o.path("gpus").get(0);
        assertThat(g.path("index").asInt()).isZero();
        assertThat(g.path("uuid").asText()).isEqualTo(GpuStub.uuid(0));
        assertThat(g.path("model").asText()).isEqualTo("NVIDIA A100-SXM4-80GB");
        assertThat(g.path("memory").asText()).isEqualTo("81920M");
        assertThat(g.path("numa_node").asInt()).isZero();
        assertThat(g.path("pci").asText()).isEqualTo("00000000:3B:00.0");
        assertThat(g.path("compute_capability").asText()).isEqualTo("8.0");
        assertThat(g.path("devices").toString()).isEqualTo("[\"" + tmp.resolve("nvidia0") + "\"]");
        assertThat(o.path("complex_values").asText()).isEqualTo("gpu=1(0[devices=" + tmp.resolve("nvidia0")
                + ":rw,uuid=" + GpuStub.uuid(0) + ",model=NVIDIA_A100-SXM4-80GB,memory=81920M,numa_node=0,"
                + "pci=00000000:3B:00.0,compute_capability=8.0])");
    }

    @Test
    void noCard_anEmptyMap() throws Exception {
        MainTest.Run r = discover(GpuStub.cards(0));
        assertThat(r.code()).isZero();
        assertThat(r.out()).startsWith("nvidia driver 550.54.15, cuda 12.4, 0 gpus").contains("\ngpu=0()\n");
    }

    @Test
    void eightCards_fourSharesByUuid() throws Exception {
        MainTest.Run r = discover(GpuStub.cards(8), "--shares", "4", "--id", "uuid", "--json");
        assertThat(r.code()).isZero();
        JsonNode o = JSON.readTree(r.out());
        assertThat(o.path("gpus").size()).isEqualTo(8);
        assertThat(o.path("complex_values").asText()).startsWith("gpu=32(" + GpuStub.uuid(0) + "[")
                .contains(" " + GpuStub.uuid(7) + "[");
    }

    @Test
    void text_showsTheCardsTheTableLinesAndTheEntry() throws Exception {
        MainTest.Run r = discover(GpuStub.cards(2));
        assertThat(r.out()).contains("gpu 1  " + GpuStub.uuid(1) + "  NVIDIA A100-SXM4-80GB  81920M  numa 0  pci "
                + "00000000:3C:00.0  cc 8.0  " + tmp.resolve("nvidia1") + ":rw\n")
                .contains("uuid uuid STRING == YES NO NONE 0\n").contains("\ngpu=2(0[");
    }

    @Test
    void aLostCard_isLeftOut_withOneWarningLine() throws Exception {
        MainTest.Run r = discover(GpuStub.description(List.of(GpuStub.card(0, "NVIDIA H200", false),
                GpuStub.card(1, "NVIDIA H200", true))));
        assertThat(r.code()).isZero();
        assertThat(r.err()).isEqualTo("warning: gpu 1: nvmlDeviceGetHandleByIndex_v2 (gpu 1): GPU is lost "
                + "(NVML_ERROR_GPU_IS_LOST) (left out)\n");
        assertThat(r.out()).contains(", 1 gpus").contains("\ngpu=1(0[");
    }

    @Test
    void initError_exit2_oneLine() throws Exception {
        MainTest.Run r = discover("{\"init_error\":\"DRIVER_NOT_LOADED\"}");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("error: no NVML: nvmlInit_v2: Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED)\n");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void noNvml_exit2_namingWhy() throws Exception {
        GpuStub.use(tmp.resolve("nvml.json"), GpuStub.cards(1));
        MainTest.Run r = run("discover", "--nvml-library", tmp.resolve("libnvidia-ml.so.1").toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("error: no NVML: dlopen " + tmp.resolve("libnvidia-ml.so.1")
                + ": cannot be loaded").endsWith("(NVML_ERROR_LIBRARY_NOT_FOUND)\n");
        assertThat(r.err().lines().count()).isEqualTo(1);
    }
}
