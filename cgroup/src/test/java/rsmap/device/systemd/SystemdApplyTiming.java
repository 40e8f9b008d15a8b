// device isolation benchmark, systemd path: time to apply and to remove an 8-device policy through the D-Bus stand-in.
package rsmap.device.systemd;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import rsmap.device.DevicePolicy;
import rsmap.device.DeviceRule;
import rsmap.map.DeviceList.Mode;

/**
 * Not a test (a plain {@code main}): starts a private dbus-daemon and the manager stand-in, then applies
 * and removes a closed policy of 8 devices 1,000 times (after 200 warm-up rounds) and prints the median
 * and 99th percentile in microseconds. Target: under 20 ms. Each apply is one
 * StartTransientUnit round trip through the bus daemon, each remove one StopUnit.
 * <pre>
 *   mvn -q -o -pl cgroup test-compile exec:java -Dexec.classpathScope=test \
 *       -Dexec.mainClass=rsmap.device.systemd.SystemdApplyTiming
 * </pre>
 */
public final class SystemdApplyTiming {
    private static final int WARMUP = 200;
    private static final int ROUNDS = 1_000;

    private SystemdApplyTiming() {
    }

    public static void main(String[] args) throws Exception {
        List<DeviceRule> rules = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            rules.add(new DeviceRule("/dev/nvidia" + i, 'c', 195, i, Mode.RW));
        }
        DevicePolicy policy = new DevicePolicy(true, rules, List.of());
        try (PrivateBus bus = PrivateBus.start();
                SystemdStandIn systemd = new SystemdStandIn(bus.address());
                SystemdBackend backend = new SystemdBackend(bus.address(), false, SystemdBackend.NO_EXISTING_SCOPE)) {
            systemd.record(false);
            if (!backend.availability().available()) {
                throw new IllegalStateException(backend.availability().reason());
            }
            long[] apply = new long[ROUNDS];
            long[] remove = new long[ROUNDS];
            for (int i = -WARMUP; i < ROUNDS; i++) {
                String job = "bench-" + (i + WARMUP);
                long t0 = System.nanoTime();
                backend.apply(job, policy, 4242);
                long t1 = System.nanoTime();
                backend.remove(job);
                long t2 = System.nanoTime();
                if (i >= 0) {
                    apply[i] = t1 - t0;
                    remove[i] = t2 - t1;
                }
            }
            System.out.println(report("apply ", apply));
            System.out.println(report("remove", remove));
        }
    }

    private static String report(String what, long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        long median = sorted[sorted.length / 2];
        long p99 = sorted[(int) Math.ceil(sorted.length * 0.99) - 1];
        return String.format("systemd %s 8 devices x%d: median %d us, p99 %d us, max %d us", what, nanos.length,
                median / 1000, p99 / 1000, sorted[sorted.length - 1] / 1000);
    }
}
