// device isolation's benchmark for cgroup v1: time to apply and to remove a policy of 8 devices (target < 5 ms).
package rsmap.device.v1;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import rsmap.device.DevicePolicy;
import rsmap.device.FakeDevices;

/**
 * Run as root: {@code java -cp <cgroup test classpath> rsmap.device.v1.CgroupV1ApplyTiming [rounds]}.
 * Eight fake GPU nodes (c 195:0-7) plus the five basic devices: 13 allow lines per apply.
 */
public final class CgroupV1ApplyTiming {
    private CgroupV1ApplyTiming() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        Path dir = FakeDevices.tempDir();
        StringBuilder host = new StringBuilder("gpu=8(");
        for (int i = 0; i < 8; i++) {
            host.append(i == 0 ? "" : " ").append("g").append(i).append("[devices=")
                    .append(FakeDevices.node(dir, "nvidia" + i, 195, i)).append(":rw]");
        }
        DevicePolicy policy = DevicePolicy.of(FakeDevices.instances(host.append(')').toString()));
        CgroupV1Backend backend = new CgroupV1Backend(CgroupV1Backend.DEFAULT_ROOT);
        long[] apply = new long[rounds];
        long[] remove = new long[rounds];
        for (int r = 0; r < rounds; r++) {
            String job = "timing-" + r;
            long t0 = System.nanoTime();
            backend.apply(job, policy);
            long t1 = System.nanoTime();
            backend.remove(job);
            long t2 = System.nanoTime();
            apply[r] = t1 - t0;
            remove[r] = t2 - t1;
        }
        report("apply 8 devices", apply);
        report("remove", remove);
        try (var s = Files.list(dir)) {
            for (Path p : s.toList()) {
                Files.delete(p);
            }
        }
        Files.delete(dir);
    }

    private static void report(String what, long[] ns) {
        long[] sorted = ns.clone();
        Arrays.sort(sorted);
        int warm = sorted.length / 10; // the first rounds include class loading and JIT
        long[] steady = Arrays.copyOfRange(ns, warm, ns.length);
        Arrays.sort(steady);
        System.out.printf("%-16s median %7.1f us  p99 %7.1f us  (n=%d after %d warm-up rounds)%n", what,
                steady[steady.length / 2] / 1e3, steady[(int) (steady.length * 0.99)] / 1e3, steady.length, warm);
    }
}
