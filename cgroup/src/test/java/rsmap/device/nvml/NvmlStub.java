// Tests' side of native-stubs' libnvidia-ml.so.1: descriptions written as JSON, and $RSMAP_NVML_STUB set in
// this process's own environment (libc setenv: the stand-in reads it with getenv at nvmlInit_v2).
package rsmap.device.nvml;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

final class NvmlStub {
    /** Built by the native-stubs module (before this one). */
    static final Path LIBRARY = Path.of("..", "native-stubs", "target", "libnvidia-ml.so.1").toAbsolutePath()
            .normalize();

    private interface LibC extends Library {
        int setenv(String name, String value, int overwrite);
    }

    private static final LibC LIBC = Native.load("c", LibC.class);

    private NvmlStub() {
    }

    /** Points the stand-in at {@code description}, written to {@code file}. */
    static Path use(Path file, String description) throws IOException {
        Files.writeString(file, description);
        LIBC.setenv("RSMAP_NVML_STUB", file.toString(), 1);
        return file;
    }

    /** Points the stand-in at a file that does not exist. */
    static void missing(Path file) {
        LIBC.setenv("RSMAP_NVML_STUB", file.toString(), 1);
    }

    /** {@code n} A100 cards, minors 0..n-1, on PCI buses 0x3B + i, half on NUMA node 0 and half on 1. */
    static String cards(int n) {
        List<String> gpus = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            gpus.add(card(i, false));
        }
        return description(gpus);
    }

    static String card(int i, boolean lost) {
        return String.format("{\"uuid\":\"GPU-%08x-1111-2222-3333-444455556666\",\"name\":\"NVIDIA A100-SXM4-80GB\","
                + "\"minor\":%d,\"memory_mib\":81920,\"pci_bus_id\":\"00000000:%02X:00.0\",\"numa_node\":%d,"
                + "\"compute_capability\":\"8.0\"%s}", i, i, 0x3B + i, i < 4 ? 0 : 1, lost ? ",\"lost\":true" : "");
    }

    static String description(List<String> gpus) {
        return "{\"driver\":\"550.54.15\",\"cuda\":\"12.4\",\"gpus\":[" + String.join(",", gpus) + "]}";
    }
}
