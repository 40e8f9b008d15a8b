// Test support: native-stubs' stand-in libnvidia-ml.so.1, pointed at a JSON description through
// $RSMAP_NVML_STUB set in this process's own environment (libc setenv; NVML reads it at nvmlInit_v2).
package rsmap.daemon;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

public final class GpuStub {
    /** Built by the native-stubs module. */
    public static final Path LIBRARY = Path.of("..", "native-stubs", "target", "libnvidia-ml.so.1").toAbsolutePath()
            .normalize();

    private interface LibC extends Library {
        int setenv(String name, String value, int overwrite);
    }

    private static final LibC LIBC = Native.load("c", LibC.class);

    private GpuStub() {
    }

    /** Writes {@code description} to {@code file} and points NVML (of this process and its children) at it. */
    public static Path use(Path file, String description) throws Exception {
        Files.createDirectories(file.getParent());
        Files.writeString(file, description);
        LIBC.setenv("RSMAP_NVML_STUB", file.toString(), 1);
        return file;
    }

    /** The UUID of card {@code i}. */
    public static String uuid(int i) {
        return String.format("GPU-%08x-1111-2222-3333-444455556666", i);
    }

    /** Card {@code i}: {@code model}, minor i, 80 GiB, PCI bus 0x3B + i, NUMA node i / 4. */
    public static String card(int i, String model, boolean lost) {
        return String.format("{\"uuid\":\"%s\",\"name\":\"%s\",\"minor\":%d,\"memory_mib\":81920,"
                + "\"pci_bus_id\":\"00000000:%02X:00.0\",\"numa_node\":%d,\"compute_capability\":\"8.0\"%s}",
                uuid(i), model, i, 0x3B + i, i / 4, lost ? ",\"lost\":true" : "");
    }

    /** {@code n} A100 cards. */
    public static String cards(int n) {
        List<String> gpus = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            gpus.add(card(i, "NVIDIA A100-SXM4-80GB", false));
        }
        return description(gpus);
    }

    public static String description(List<String> gpus) {
        return "{\"driver\":\"550.54.15\",\"cuda\":\"12.4\",\"gpus\":[" + String.join(",", gpus) + "]}";
    }

    /** The complex table lines of the characteristics the example table lacks (uuid, pci, compute_capability). */
    public static void declareAll(Path complexes) throws Exception {
        Files.writeString(complexes, Files.readString(complexes)
                + "uuid                uuid       STRING      ==    YES         NO         NONE     0\n"
                + "pci                 pci        STRING      ==    YES         NO         NONE     0\n"
                + "compute_capability  cc         DOUBLE      <=    YES         NO         0        0\n");
    }
}
