// Test support for MIG through the stand-in NVML: an A100-80GB-like card with seven 1g slices, a state
// file, capability minors and fake nodes, and the complex table lines a map of slices needs.
package rsmap.daemon;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

public final class MigStub {
    public static final String UUID = "GPU-00000000-1111-2222-3333-444455556666";

    private MigStub() {
    }

    /** The description: card 0 (minor 0) with MIG on, its state in {@code state}; {@code extra} into the card. */
    public static String description(Path state, String extra) {
        return "{\"driver\":\"550.54.15\",\"cuda\":\"12.4\",\"state_file\":\"" + state + "\",\"gpus\":[{\"uuid\":\"" + UUID
                + "\",\"name\":\"NVIDIA A100-SXM4-80GB\",\"minor\":0,\"memory_mib\":81920,"
                + "\"pci_bus_id\":\"00000000:3B:00.0\",\"numa_node\":0,\"compute_capability\":\"8.0\","
                + "\"mig\":{\"mode\":\"enabled\",\"profiles\":["
                + "{\"name\":\"1g.10gb\",\"slices\":1,\"memory_mib\":9856,\"placements\":[0,1,2,3,4,5,6]},"
                + "{\"name\":\"2g.20gb\",\"slices\":2,\"memory_mib\":19968,\"placements\":[0,2,4]},"
                + "{\"name\":\"3g.40gb\",\"slices\":3,\"memory_mib\":40192,\"placements\":[0,4]},"
                + "{\"name\":\"4g.40gb\",\"slices\":4,\"memory_mib\":40192,\"placements\":[0]},"
                + "{\"name\":\"7g.80gb\",\"slices\":7,\"memory_mib\":80384,\"placements\":[0]}]}" + extra + "}]}";
    }

    /** Declares the map of slices and the characteristics a slice carries. */
    public static void declare(Path complexes) throws Exception {
        Files.writeString(complexes, Files.readString(complexes)
                + "mig                 mig        RSMAP       <=    YES         HOST       0        0\n"
                + "profile             prof       STRING      ==    YES         NO         NONE     0\n"
                + "slices              sl         INT         <=    YES         NO         0        0\n");
    }

    /**
     * A driver's mig-minors for card 0 (gi 1..15, ci 0) at {@code caps}, and its capability nodes under
     * {@code dev}/nvidia-caps: files, or character devices (major 238) where {@code mknod}.
     */
    static void caps(Path caps, Path dev, boolean mknod) throws Exception {
        Files.createDirectories(dev.resolve("nvidia-caps"));
        List<String> lines = new ArrayList<>(List.of("config 1", "monitor 2"));
        for (int gi = 1; gi < 16; gi++) {
            for (String name : List.of("gpu0/gi" + gi + "/access " + capMinor(gi, -1),
                    "gpu0/gi" + gi + "/ci0/access " + capMinor(gi, 0))) {
                lines.add(name);
                Path node = dev.resolve("nvidia-caps/nvidia-cap" + name.substring(name.indexOf(' ') + 1));
                if (mknod) {
                    ExecdCell.sh("mknod -m 666 " + node + " c 238 " + name.substring(name.indexOf(' ') + 1));
                } else {
                    Files.writeString(node, "");
                }
            }
        }
        Files.write(caps, lines);
    }

    /** The minor of gi's access node (ci -1) or of its ci's. */
    static int capMinor(int gi, int ci) {
        return 3 + gi * 9 + ci + 1;
    }
}
