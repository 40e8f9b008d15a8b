// docs/gpus.md's benchmark: exec of bin/rsmapd to READY=1 with gpu_map built from NVML (the stand-in
// libnvidia-ml.so.1 reporting 8 cards) against the same 8 cards written by hand with nvml_library = off.
package rsmap.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Both hosts have the same map: 8 instances with devices=, uuid and model; the discovered one loads NVML
 * through JNA, reads every card, and builds the entry. Each case starts {@code RUNS} times (default 7)
 * after one unreported start, interleaved; medians and their ratio are printed. Args: {@code [RUNS]}.
 */
public final class GpuStartup {
    private GpuStartup() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 7;
        Path stub = Rsmapd.ROOT.resolve("native-stubs/target/libnvidia-ml.so.1");
        Path discovered = Files.createTempDirectory("rsmap-bench-gpu");
        Path written = Files.createTempDirectory("rsmap-bench-gpu-written");
        try {
            List<String> gpus = new ArrayList<>();
            StringBuilder hand = new StringBuilder("gpu=8(");
            for (int i = 0; i < 8; i++) {
                String uuid = String.format("GPU-%08x-1111-2222-3333-444455556666", i);
                gpus.add(String.format("{\"uuid\":\"%s\",\"name\":\"NVIDIA A100-SXM4-80GB\",\"minor\":%d,"
                        + "\"memory_mib\":81920,\"pci_bus_id\":\"00000000:%02X:00.0\",\"numa_node\":%d,"
                        + "\"compute_capability\":\"8.0\"}", uuid, i, 0x3B + i, i / 4));
                hand.append(i == 0 ? "" : " ").append(i).append("[devices=/dev/nvidia").append(i)
                        .append(":rw,memory=81920M,model=NVIDIA_A100-SXM4-80GB]");
            }
            Path description = Files.writeString(discovered.resolve("nvml.json"),
                    "{\"driver\":\"550.54.15\",\"cuda\":\"12.4\",\"gpus\":[" + String.join(",", gpus) + "]}");
            Rsmapd.configure(discovered, "NONE", "nvml_library = " + stub, "gpu_map = gpu", "discover = off");
            Rsmapd.configure(written, hand.append(")").toString(), "nvml_library = off", "discover = off");
            Map<String, String> env = Map.of("RSMAP_NVML_STUB", description.toString());
            Rsmapd.start(discovered, env).close();
            Rsmapd.start(written).close();
            long[] d = new long[runs];
            long[] w = new long[runs];
            for (int r = 0; r < runs; r++) {
                try (Rsmapd x = Rsmapd.start(discovered, env)) {
                    d[r] = x.readyNanos();
                }
                try (Rsmapd x = Rsmapd.start(written)) {
                    w[r] = x.readyNanos();
                }
            }
            System.out.printf("start-up with GPUs: exec to READY=1, %d runs each%n", runs);
            System.out.printf("  %-52s median %6.1f ms  max %6.1f ms%n", "8 cards written by hand, nvml_library = off",
                    median(w), max(w));
            System.out.printf("  %-52s median %6.1f ms  max %6.1f ms  (%.2fx)%n", "8 cards discovered (stand-in NVML)",
                    median(d), max(d), median(d) / median(w));
        } finally {
            rsmap.daemon.Trees.delete(discovered);
            rsmap.daemon.Trees.delete(written);
        }
    }

    private static double median(long[] ns) {
        long[] s = ns.clone();
        Arrays.sort(s);
        return s[s.length / 2] / 1e6;
    }

    private static double max(long[] ns) {
        return Arrays.stream(ns).max().orElse(0) / 1e6;
    }
}
