// JMH benchmark of node filters: a 10-clause filter evaluated on 10,000 hosts.
// Target: under 5 ms for all 10,000 hosts.
// Run: mvn -B -o -q -Pbench -pl plugin test-compile exec:exec -Dbench.args='FilterBenchmark -f 1 -i 5'
package rsmap.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.node.AttributeTypes;
import rsmap.node.Filter;
import rsmap.node.Filters;
import rsmap.node.Node;
import rsmap.node.NodeAttributes;
import rsmap.node.Verdict;

/** Average time per operation (all 10,000 hosts) in milliseconds. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class FilterBenchmark {
    static final int HOSTS = 10_000;
    /** Ten comparisons: numbers with units, versions, strings, a boolean, host names and lists. */
    static final String FILTER = "cpu_speed > 2GHz && mem >= 64G && cores >= 16 && kernel >= 6.5 && kernel != 6.5.2"
            + " && !(arch in [\"aarch64\", \"ppc64le\"]) && ib == true && !(host in [\"n13\", \"n77\", \"n4242\"])"
            + " && (rack != \"r9\" || gpus > 0) && os == \"rhel9\"";

    List<Node> nodes;
    Filter filter;
    Filters withAdmin;

    @Setup
    public void setUp() throws ParseException {
        AttributeTypes types = AttributeTypes.parse("{\"kernel\":\"version\",\"ib\":\"boolean\"}", Limits.DEFAULT);
        filter = Filter.parse(FILTER, types, Limits.DEFAULT);
        withAdmin = Filters.combine(Filter.parse("os != \"rhel7\""), filter);
        String[] kernels = {"6.5.3", "6.10", "6.5.2-1-generic", "6.4.9", "5.14.0-284.el9"};
        String[] speeds = {"2.4GHz", "1.8GHz", "3GHz", "2100MHz"};
        nodes = new ArrayList<>(HOSTS);
        int passing = 0;
        for (int i = 0; i < HOSTS; i++) {
            Map<String, String> a = new LinkedHashMap<>();
            a.put("cpu_speed", speeds[i % speeds.length]);
            a.put("mem", i % 3 == 0 ? "32G" : "128G");
            a.put("cores", Integer.toString(8 << (i % 3)));
            a.put("kernel", kernels[i % kernels.length]);
            a.put("arch", i % 11 == 0 ? "aarch64" : "x86_64");
            a.put("ib", i % 7 == 0 ? "false" : "true");
            a.put("rack", "r" + (i % 10));
            a.put("gpus", Integer.toString(i % 2));
            a.put("os", "rhel9");
            Node n = Node.of("n" + i, NodeAttributes.parse(a, types));
            nodes.add(n);
            passing += filter.test(n) ? 1 : 0;
        }
        if (passing == 0 || passing == HOSTS) {
            throw new IllegalStateException("the hosts should pass and fail at different comparisons: " + passing);
        }
    }

    /** (a) The target: which of 10,000 hosts pass a 10-clause filter. */
    @Benchmark
    public int test10kHosts() {
        int passing = 0;
        for (int i = 0; i < nodes.size(); i++) {
            passing += filter.test(nodes.get(i)) ? 1 : 0;
        }
        return passing;
    }

    /** (b) The same with a verdict per host, naming the failing comparison of each failing host. */
    @Benchmark
    public List<Verdict> evaluate10kHosts() {
        return filter.evaluate(nodes);
    }

    /** (c) (b) behind an admin limit: Filters.combine(admin, job). */
    @Benchmark
    public List<Verdict> evaluateWithAdmin10kHosts() {
        return withAdmin.evaluate(nodes);
    }
}
