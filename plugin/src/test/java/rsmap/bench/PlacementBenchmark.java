// JMH benchmark of alternatives: choosing among 8 alternatives on 1,000 hosts with a filter.
// Target: under 10 ms per choice.
// Run: mvn -B -o -q -Pbench -pl plugin test-compile exec:exec -Dbench.args='PlacementBenchmark -f 1 -i 5'
package rsmap.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
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
import rsmap.alloc.Cluster;
import rsmap.alloc.JobSpec;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.node.AttributeTypes;
import rsmap.node.Filter;
import rsmap.node.Node;
import rsmap.node.NodeAttributes;
import rsmap.place.Choice;
import rsmap.place.ClusterView;
import rsmap.place.Option;
import rsmap.place.PlacedJob;
import rsmap.place.Placement;
import rsmap.place.Policy;
import rsmap.request.RequestList;

/**
 * 1,000 hosts of 32 slots with one GPU map each, half of them busy; 8 alternatives asking 512 down to
 * 64 slots with a GPU each (per host), a filter on cpu speed and kernel; the first five cannot start,
 * the sixth can. Average time per choice in milliseconds.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class PlacementBenchmark {
    static final int HOSTS = 1_000;

    ClusterView view;
    PlacedJob job;

    @Setup
    public void setUp() throws ParseException {
        ComplexTable table = ComplexTable.parse("gpu gpu RSMAP <= YES HOST 0 0\n");
        Cluster cluster = new Cluster(table);
        ComplexValues gpus = ComplexValues.parse("gpu=2(g0 g1)", table, Limits.DEFAULT);
        AttributeTypes types = AttributeTypes.parse("{\"kernel\":\"version\"}", Limits.DEFAULT);
        Map<String, Node> nodes = new LinkedHashMap<>();
        for (int h = 0; h < HOSTS; h++) {
            String name = "n" + h;
            cluster.configure(name, gpus, 0);
            cluster.setSlots(name, OptionalInt.of(32), 0);
            Map<String, String> a = Map.of("cpu_speed", h % 3 == 0 ? "1.8GHz" : "2.4GHz", "kernel", "6.5." + (h % 7));
            nodes.put(name, new Node(name, OptionalInt.of(32), NodeAttributes.parse(a, types, Limits.DEFAULT)));
            if (h % 2 == 0) {
                cluster.submit(new JobSpec("busy" + h, new RequestList(List.of()), Map.of(name, 32), name,
                        JobSpec.UNLIMITED, Optional.empty(), false), 0);
            }
        }
        Filter filter = Filter.parse("cpu_speed > 2GHz && kernel >= 6.5 && kernel != 6.5.2", types, Limits.DEFAULT);
        RequestList gpu = RequestList.parse("gpu=1", table);
        List<Option> options = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            int slots = i < 5 ? 16_384 >> i : 64 << (7 - i);
            options.add(new Option("", gpu, Map.of(), List.of(), slots, Optional.of(filter), Optional.empty(),
                    List.of(), false));
        }
        job = new PlacedJob("bench", options, true, JobSpec.UNLIMITED, true);
        view = new ClusterView(cluster, nodes, Optional.empty());
        if (Placement.choose(view, job, Policy.USER).kind() != Choice.Kind.START) {
            throw new IllegalStateException("the benchmark's job should start");
        }
    }

    @Benchmark
    public Choice choose() {
        return Placement.choose(view, job, Policy.USER);
    }
}
