// docs/health.md's benchmark: from an Xid 79 appended to the stand-in NVML's events_file to the first
// JOB_START that bin/rsmapd refuses for that card (the card was granted and ended in a loop until then).
package rsmap.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

/**
 * One card per run (ids by index, 1 share each): a client starts and ends {@code gpu=1[id=R]} as fast as
 * rsmapd answers; the Xid is appended after the loop has run a while, and the time from the append to the
 * first refusal is the figure (it includes the stand-in's 2 ms poll of the file, the watcher's hand-over
 * under the daemon's lock and one JOB_START round trip). Args: {@code [RUNS]} (default 20).
 */
public final class HealthLatency {
    private HealthLatency() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        Path stub = Rsmapd.ROOT.resolve("native-stubs/target/libnvidia-ml.so.1");
        Path dir = Files.createTempDirectory("rsmap-bench-health");
        try {
            Path events = dir.resolve("events");
            List<String> gpus = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                gpus.add(String.format("{\"uuid\":\"GPU-%08x-1111-2222-3333-444455556666\",\"name\":\"NVIDIA A100\","
                        + "\"minor\":%d,\"memory_mib\":81920,\"pci_bus_id\":\"00000000:%02X:00.0\",\"numa_node\":0,"
                        + "\"compute_capability\":\"8.0\"}", i, i, 0x10 + i));
            }
            Path description = Files.writeString(dir.resolve("nvml.json"), "{\"driver\":\"550.54.15\",\"cuda\":\"12.4\","
                    + "\"events_file\":\"" + events + "\",\"gpus\":[" + String.join(",", gpus) + "]}");
            Files.createDirectories(dir.resolve("dev"));
            Rsmapd.configure(dir, "NONE", "nvml_library = " + stub, "gpu_map = gpu", "discover = off",
                    "gpu_dev_dir = " + dir.resolve("dev"), "reconcile_interval = 0");
            long[] ns = new long[runs];
            int[] grantsBefore = new int[runs];
            try (Rsmapd d = Rsmapd.start(dir, Map.of("RSMAP_NVML_STUB", description.toString()));
                 TestClient c = new TestClient(d.socket())) {
                long tid = 1;
                c.call(Frame.of(tid++, Code.INIT.value(), Session.VERSION));
                Thread.sleep(500); // the benchmark's warm-up gap: the watcher registers the cards after READY
                for (int r = 0; r < runs; r++) {
                    String request = "{\"job\":\"" + (1000 + r) + "\",\"user\":\"bench\",\"request\":\"gpu=1[id=" + r + "]\"}";
                    String end = "{\"job\":\"" + (1000 + r) + "\"}";
                    long appended = 0;
                    for (int n = 0; ; n++) {
                        if (n == 200) {
                            Files.writeString(events, String.format("{\"uuid\":\"GPU-%08x-1111-2222-3333-444455556666\","
                                    + "\"type\":\"xid\",\"xid\":79}%n", r), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                            appended = System.nanoTime();
                        }
                        List<Frame> a = c.call(Frame.of(tid++, Code.JOB_START.value(), request));
                        if (a.get(a.size() - 1).code() == Code.OK.value()) {
                            c.call(Frame.of(tid++, Code.JOB_END.value(), end));
                        } else {
                            if (appended == 0) {
                                throw new IllegalStateException("refused before the event: " + a);
                            }
                            ns[r] = System.nanoTime() - appended;
                            grantsBefore[r] = n - 200;
                            break;
                        }
                    }
                }
            }
            long[] s = ns.clone();
            Arrays.sort(s);
            System.out.printf("taint latency: Xid 79 appended to the first refused JOB_START, %d runs%n", runs);
            System.out.printf("  median %6.2f ms  p90 %6.2f ms  max %6.2f ms  (grants after the append: median %d)%n",
                    s[runs / 2] / 1e6, s[(int) (runs * 0.9)] / 1e6, s[runs - 1] / 1e6,
                    Arrays.stream(grantsBefore).sorted().toArray()[runs / 2]);
        } finally {
            rsmap.daemon.Trees.delete(dir);
        }
    }
}
