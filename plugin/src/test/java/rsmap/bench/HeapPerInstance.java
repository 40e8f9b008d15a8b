// Measures the heap the allocation state takes per configured instance (the allocation core target: < 200 bytes).
package rsmap.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import rsmap.alloc.Cluster;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;

/**
 * Builds hosts of 512 instances (the LanguageBenchmark shape: distinct cards shared four ways, each with
 * three characteristics) and of 8 shared bare instances, and prints the retained heap per instance.
 * Run: {@code mvn -B -q -Pbench -pl plugin test-compile exec:exec -Dbench.main=rsmap.bench.HeapPerInstance}.
 */
public final class HeapPerInstance {
    private HeapPerInstance() {
    }

    public static void main(String[] args) throws Exception {
        ComplexTable table = ComplexTable.parse(AllocationBenchmark.TABLE);
        measure("512 instances with 3 characteristics each, 128 cards x 4 shares", table,
                AllocationBenchmark.host512(), 200, 512);
        measure("8 bare instances, 2 cards x 4 shares", table, "gpu=8(0 0 0 0 1 1 1 1)", 10_000, 8);
        StringBuilder distinct = new StringBuilder("gpu=512(");
        for (int i = 0; i < 512; i++) {
            distinct.append(i == 0 ? "" : " ").append("gpu").append(i).append("[memory=").append(i % 2 == 0 ? "80G" : "40G")
                    .append(",model=A100,numa_node=").append(i % 4).append(']');
        }
        measure("512 distinct instances with 3 characteristics each", table, distinct.append(')').toString(), 200, 512);
        StringBuilder unique = new StringBuilder("gpu=512(");
        for (int i = 0; i < 512; i++) {
            unique.append(i == 0 ? "" : " ").append("gpu").append(i).append("[memory=").append(40 + i)
                    .append("G,model=A100,numa_node=").append(i).append(']');
        }
        measure("512 distinct instances, every characteristic value unique", table, unique.append(')').toString(), 200,
                512);
    }

    private static void measure(String what, ComplexTable table, String value, int hosts, int perHost) throws Exception {
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        long before = used(mem);
        Cluster c = new Cluster(table);
        for (int h = 0; h < hosts; h++) {
            // Each host parses its own value, as the daemon does when it reads a configuration.
            c.configure("node" + h, ComplexValues.parse(value, table), 0);
        }
        long after = used(mem);
        double perInstance = (after - before) / (double) (hosts * (long) perHost);
        System.out.printf("%-66s %8.1f bytes/instance (%d hosts)%n", what, perInstance, hosts);
        if (c.hosts().size() != hosts) {
            throw new AssertionError("keep the cluster reachable");
        }
    }

    private static long used(MemoryMXBean mem) throws InterruptedException {
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return mem.getHeapMemoryUsage().getUsed();
    }
}
