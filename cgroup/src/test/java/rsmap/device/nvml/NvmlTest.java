// NVML through JNA against native-stubs' stand-in libnvidia-ml.so.1: what a discovery reads, and every
// failure as one line naming the call and nvmlErrorString's text.
package rsmap.device.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NvmlTest {
    @TempDir
    Path dir;

    @BeforeAll
    static void built() {
        assertThat(NvmlStub.LIBRARY).as("built by the native-stubs module").isRegularFile();
    }

    private Nvml nvml() throws NvmlException {
        return Nvml.load(NvmlStub.LIBRARY.toString(), dir.resolve("no-sysfs"));
    }

    @Test
    void discover_oneCard_readsEveryFact() throws Exception {
        NvmlStub.use(dir.resolve("d.json"), NvmlStub.cards(1));
        Inventory inv = nvml().discover();
        assertThat(inv.driver()).isEqualTo("550.54.15");
        assertThat(inv.cuda()).isEqualTo("12.4");
        assertThat(inv.unread()).isEmpty();
        assertThat(inv.gpus()).containsExactly(new Gpu(0, "GPU-00000000-1111-2222-3333-444455556666",
                "NVIDIA A100-SXM4-80GB", 0, 81920L << 20, "00000000:3B:00.0", OptionalInt.of(0), "8.0"));
        assertThat(inv.gpus().get(0).memoryMib()).isEqualTo(81920);
        assertThat(inv.gpus().get(0).node("/dev")).isEqualTo("/dev/nvidia0");
    }

    @Test
    void discover_noCard_emptyInventory() throws Exception {
        NvmlStub.use(dir.resolve("d.json"), NvmlStub.cards(0));
        assertThat(nvml().discover().gpus()).isEmpty();
    }

    @Test
    void discover_eightCards_inIndexOrder() throws Exception {
        NvmlStub.use(dir.resolve("d.json"), NvmlStub.cards(8));
        List<Gpu> gpus = nvml().discover().gpus();
        assertThat(gpus).extracting(Gpu::index).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(gpus).extracting(Gpu::minor).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(gpus.get(7).pciBusId()).isEqualTo("00000000:42:00.0");
        assertThat(gpus.get(7).numaNode()).isEqualTo(OptionalInt.of(1));
    }

    @Test
    void discover_initError_namesCallAndText() throws Exception {
        NvmlStub.use(dir.resolve("d.json"), "{\"init_error\":\"DRIVER_NOT_LOADED\"}");
        assertThatThrownBy(() -> nvml().discover()).isInstanceOf(NvmlException.class)
                .hasMessage("nvmlInit_v2: Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED)");
    }

    @Test
    void discover_missingDescription_libraryNotFound() throws Exception {
        NvmlStub.missing(dir.resolve("absent.json"));
        assertThatThrownBy(() -> nvml().discover()).isInstanceOf(NvmlException.class)
                .hasMessage("nvmlInit_v2: NVML Shared Library Not Found (NVML_ERROR_LIBRARY_NOT_FOUND)");
    }

    @Test
    void discover_descriptionNotJson_unknownError_andTheNextGoodOneReads() throws Exception {
        String[] bad = {"", "{", "{\"gpus\":[", "{\"driver\":\"550\"} x", "[1,2]", "{\"a\":\"\\q\"}",
            "{\"a\":\"unterminated}", "[".repeat(100_000), "{\"gpus\":{}}", "{\"init_error\":\"NO_SUCH_ERROR\"}"};
        for (String text : bad) {
            NvmlStub.use(dir.resolve("d.json"), text);
            assertThatThrownBy(() -> nvml().discover()).as(text.length() > 40 ? text.substring(0, 40) : text)
                    .isInstanceOf(NvmlException.class).hasMessage("nvmlInit_v2: Unknown Error (NVML_ERROR_UNKNOWN)");
        }
        NvmlStub.use(dir.resolve("d.json"), NvmlStub.cards(1));
        assertThat(nvml().discover().gpus()).hasSize(1);
    }

    @Test
    void discover_lostCard_leftOutWithItsLine() throws Exception {
        NvmlStub.use(dir.resolve("d.json"), NvmlStub.description(List.of(NvmlStub.card(0, false),
                NvmlStub.card(1, true), NvmlStub.card(2, false))));
        Inventory inv = nvml().discover();
        assertThat(inv.gpus()).extracting(Gpu::index).containsExactly(0, 2);
        assertThat(inv.unread()).containsExactly(
                "gpu 1: nvmlDeviceGetHandleByIndex_v2 (gpu 1): GPU is lost (NVML_ERROR_GPU_IS_LOST)");
    }

    @Test
    void discover_descriptionChanged_readAgain() throws Exception {
        Path d = NvmlStub.use(dir.resolve("d.json"), NvmlStub.cards(2));
        Nvml nvml = nvml();
        assertThat(nvml.discover().gpus()).hasSize(2);
        NvmlStub.use(d, NvmlStub.cards(3));
        assertThat(nvml.discover().gpus()).hasSize(3);
    }

    @Test
    void load_noSuchLibrary_oneLine() {
        assertThatThrownBy(() -> Nvml.load(dir.resolve("libnvidia-ml.so.1").toString(), dir))
                .isInstanceOf(NvmlException.class)
                .hasMessageStartingWith("dlopen " + dir.resolve("libnvidia-ml.so.1") + ": cannot be loaded")
                .hasMessageEndingWith("(NVML_ERROR_LIBRARY_NOT_FOUND)")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @Test
    void numaNode_notFromNvml_readFromSysfs() throws Exception {
        NvmlStub.use(dir.resolve("d.json"), NvmlStub.description(List.of(NvmlStub.card(0, false)
                .replace(",\"numa_node\":0", ""))));
        Path sysfs = dir.resolve("pci");
        Files.createDirectories(sysfs.resolve("0000:3b:00.0"));
        Files.writeString(sysfs.resolve("0000:3b:00.0/numa_node"), "1\n");
        Gpu g = Nvml.load(NvmlStub.LIBRARY.toString(), sysfs).discover().gpus().get(0);
        assertThat(g.numaNode()).isEqualTo(OptionalInt.of(1));
        assertThat(Nvml.load(NvmlStub.LIBRARY.toString(), dir).discover().gpus().get(0).numaNode()).isEmpty();
    }
}
