// docs/gpus.md's MIG benchmark: JOB_START (and its JOB_END) of a 1g.10gb slice, made and destroyed through
// the stand-in NVML, against JOB_START of the whole card, on bin/rsmapd; and what the stand-in itself costs.
package rsmap.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import rsmap.device.nvml.Mig;
import rsmap.device.nvml.MigCard;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

/**
 * One host, one A100-like card with MIG on (gpu_map and mig_map). Each round: JOB_START of a job asking
 * {@code mig=1[profile=1g.10gb]} then its JOB_END, and the same for {@code gpu=1}, interleaved; {@code ROUNDS}
 * (default 200) after 50 unreported. The stand-in's own cost (nvmlInit..create GI and CI..shutdown, and the
 * destroy, in this process through JNA) is measured alone. Args: {@code [ROUNDS]}.
 */
public final class MigStart {
    private MigStart() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        Path stub = Rsmapd.ROOT.resolve("native-stubs/target/libnvidia-ml.so.1");
        Path dir = Files.createTempDirectory("rsmap-bench-mig");
        try {
            Path state = dir.resolve("mig-state.json");
            String uuid = "GPU-00000000-1111-2222-3333-444455556666";
            Path description = Files.writeString(dir.resolve("nvml.json"), "{\"driver\":\"550.54.15\",\"cuda\":\"12.4\","
                    + "\"state_file\":\"" + state + "\",\"gpus\":[{\"uuid\":\"" + uuid + "\",\"name\":\"NVIDIA A100-SXM4-80GB\","
                    + "\"minor\":0,\"memory_mib\":81920,\"pci_bus_id\":\"00000000:3B:00.0\",\"compute_capability\":\"8.0\","
                    + "\"mig\":{\"mode\":\"enabled\",\"profiles\":["
                    + "{\"name\":\"1g.10gb\",\"slices\":1,\"memory_mib\":9856,\"placements\":[0,1,2,3,4,5,6]},"
                    + "{\"name\":\"7g.80gb\",\"slices\":7,\"memory_mib\":80384,\"placements\":[0]}]}}]}");
            Files.createDirectories(dir.resolve("dev/nvidia-caps"));
            StringBuilder caps = new StringBuilder();
            for (int gi = 1; gi < 16; gi++) {
                caps.append("gpu0/gi").append(gi).append("/access ").append(10 * gi).append('\n');
                caps.append("gpu0/gi").append(gi).append("/ci0/access ").append(10 * gi + 1).append('\n');
                Files.writeString(dir.resolve("dev/nvidia-caps/nvidia-cap" + 10 * gi), "");
                Files.writeString(dir.resolve("dev/nvidia-caps/nvidia-cap" + (10 * gi + 1)), "");
            }
            Files.writeString(dir.resolve("mig-minors"), caps);
            Rsmapd.configure(dir, "NONE", "nvml_library = " + stub, "gpu_map = gpu", "mig_map = mig",
                    "mig_caps_file = mig-minors", "gpu_dev_dir = dev", "discover = off", "reconcile_interval = 0");
            Files.writeString(dir.resolve("complexes"), Files.readString(dir.resolve("complexes"))
                    + "mig mig RSMAP <= YES HOST 0 0\nprofile prof STRING == YES NO NONE 0\n");
            long[] slice = new long[rounds];
            long[] whole = new long[rounds];
            long[] sliceEnd = new long[rounds];
            long[] wholeEnd = new long[rounds];
            try (Rsmapd d = Rsmapd.start(dir, Map.of("RSMAP_NVML_STUB", description.toString()));
                 TestClient c = new TestClient(d.socket())) {
                c.call(Frame.of(1, Code.INIT.value(), Session.VERSION));
                int job = 0;
                for (int r = -50; r < rounds; r++) {
                    long[] s = timed(c, ++job, "mig=1[profile=1g.10gb]");
                    long[] w = timed(c, ++job, "gpu=1");
                    if (r >= 0) {
                        slice[r] = s[0];
                        sliceEnd[r] = s[1];
                        whole[r] = w[0];
                        wholeEnd[r] = w[1];
                    }
                }
            }
            setenv("RSMAP_NVML_STUB", description.toString());
            Mig mig = Mig.load(stub.toString());
            long[] create = new long[rounds];
            long[] destroy = new long[rounds];
            for (int r = -50; r < rounds; r++) {
                long t0 = System.nanoTime();
                MigCard.Slice s = mig.create(uuid, "1g.10gb", 6);
                long t1 = System.nanoTime();
                mig.destroy(uuid, s.gi());
                long t2 = System.nanoTime();
                if (r >= 0) {
                    create[r] = t1 - t0;
                    destroy[r] = t2 - t1;
                }
            }
            System.out.printf("MIG slices on demand: %d rounds each, medians (p90)%n", rounds);
            System.out.printf("  %-46s %7.3f ms (%7.3f)%n", "JOB_START gpu=1 (the whole card)", med(whole), p90(whole));
            System.out.printf("  %-46s %7.3f ms (%7.3f)  %.1fx%n", "JOB_START mig=1[profile=1g.10gb] (a slice made)",
                    med(slice), p90(slice), med(slice) / med(whole));
            System.out.printf("  %-46s %7.3f ms (%7.3f)%n", "JOB_END gpu=1", med(wholeEnd), p90(wholeEnd));
            System.out.printf("  %-46s %7.3f ms (%7.3f)  %.1fx%n", "JOB_END of the slice (destroyed)", med(sliceEnd),
                    p90(sliceEnd), med(sliceEnd) / med(wholeEnd));
            System.out.printf("  %-46s %7.3f ms (%7.3f)%n", "stand-in alone: create GI+CI (init..shutdown)", med(create),
                    p90(create));
            System.out.printf("  %-46s %7.3f ms (%7.3f)%n", "stand-in alone: destroy CI+GI (init..shutdown)", med(destroy),
                    p90(destroy));
        } finally {
            rsmap.daemon.Trees.delete(dir);
        }
    }

    /** JOB_START then JOB_END of job {@code id}: their round trips in ns. */
    private static long[] timed(TestClient c, int id, String request) throws Exception {
        long t0 = System.nanoTime();
        java.util.List<Frame> a = c.call(Frame.of(2, Code.JOB_START.value(), "{\"job\":\"" + id + "\",\"user\":\"root\","
                + "\"request\":\"" + request + "\"}"));
        long t1 = System.nanoTime();
        if (a.get(0).code() != Code.STATE.value()) {
            throw new IllegalStateException("JOB_START " + request + ": " + a);
        }
        c.call(Frame.of(3, Code.JOB_END.value(), "{\"job\":\"" + id + "\"}"));
        long t2 = System.nanoTime();
        return new long[] {t1 - t0, t2 - t1};
    }

    private interface LibC extends com.sun.jna.Library {
        int setenv(String name, String value, int overwrite);
    }

    static void setenv(String name, String value) {
        com.sun.jna.Native.load("c", LibC.class).setenv(name, value, 1);
    }

    private static double med(long[] ns) {
        long[] s = ns.clone();
        Arrays.sort(s);
        return s[s.length / 2] / 1e6;
    }

    private static double p90(long[] ns) {
        long[] s = ns.clone();
        Arrays.sort(s);
        return s[s.length * 9 / 10] / 1e6;
    }
}
