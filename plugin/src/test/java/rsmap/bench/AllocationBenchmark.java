// JMH benchmarks of the allocation core: one grant on a 512-instance host, scope=job over
// 1,000 hosts, and replaying a 100,000-operation simulate script.
package rsmap.bench;

import java.io.BufferedReader;
import java.io.StringReader;
import java.io.StringWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import rsmap.Limits;
import rsmap.alloc.Cluster;
import rsmap.alloc.Decision;
import rsmap.alloc.JobSpec;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;
import rsmap.sim.Simulation;

@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class AllocationBenchmark {
    static final String TABLE = String.join("\n",
            "gpu gpu RSMAP <= YES HOST 0 0",
            "lic lic RSMAP <= YES JOB 0 0",
            "memory gmem MEMORY <= YES NO 0 0",
            "model model CSTRING == YES NO NONE 0",
            "numa_node numa INT == YES NO 0 0", "");

    ComplexTable table;
    Cluster host512;
    JobSpec grant512;
    Cluster cluster1000;
    JobSpec scopeJob;
    String script;
    String saturated;

    /** 128 cards shared four ways (512 instances), each with memory, model and numa_node. */
    static String host512() {
        StringBuilder b = new StringBuilder("gpu=512(");
        for (int card = 0; card < 128; card++) {
            for (int share = 0; share < 4; share++) {
                b.append(card + share == 0 ? "" : " ").append("g").append(card).append("[memory=")
                        .append(card % 2 == 0 ? "80G" : "40G").append(",model=A100,numa_node=").append(card % 4)
                        .append(']');
            }
        }
        return b.append(')').toString();
    }

    @Setup(Level.Trial)
    public void setup() throws Exception {
        table = ComplexTable.parse(TABLE);
        host512 = new Cluster(table);
        host512.configure("node01", ComplexValues.parse(host512(), table), 0);
        grant512 = new JobSpec("j", RequestList.parse("gpu=2[id=g1*,same=numa_node,memory=64G]", table),
                Map.of("node01", 1), "node01", 100, Optional.empty(), false);
        cluster1000 = new Cluster(table);
        Map<String, Integer> hosts = new LinkedHashMap<>();
        ComplexValues eight = ComplexValues.parse("gpu=8(0 0 0 0 1 1 1 1)", table);
        for (int h = 0; h < 1000; h++) {
            cluster1000.configure("node" + h, eight, 0);
            hosts.put("node" + h, 1);
        }
        // Every host but the last has card 0 partly used, so the common group must be found (card 1).
        for (int h = 0; h < 999; h++) {
            cluster1000.submit(new JobSpec("busy" + h, RequestList.parse("gpu=1[id=0]", table), Map.of("node" + h, 1),
                    "node" + h, JobSpec.UNLIMITED, Optional.empty(), false), 0);
        }
        scopeJob = new JobSpec("wide", RequestList.parse("gpu=4[same=id,scope=job]", table), hosts, "node0", 100,
                Optional.empty(), false);
        script = Scripts.replay(100_000, 42, 47);
        saturated = Scripts.replay(100_000, 42, 48);
    }

    /** Grant then release (so the state stays the same): id= + same=characteristic + MEMORY filter. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Decision grantOn512Instances() {
        Decision d = host512.submit(grant512, 0);
        host512.finish("j", 0);
        return d;
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public Decision scopeJobOver1000Hosts() {
        Decision d = cluster1000.submit(scopeJob, 0);
        cluster1000.finish("wide", 0);
        return d;
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @Warmup(iterations = 1)
    @Measurement(iterations = 3)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public int replay100kOperations() throws Exception {
        return replay(script);
    }

    /** The same mix oversubscribed: the queue grows past a thousand jobs, every finish retries it. */
    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @Warmup(iterations = 1)
    @Measurement(iterations = 3)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public int replay100kOperationsSaturated() throws Exception {
        return replay(saturated);
    }

    private int replay(String text) throws Exception {
        Simulation sim = new Simulation(table, Limits.DEFAULT, false);
        StringWriter out = new StringWriter(1 << 24);
        sim.run(new BufferedReader(new StringReader(text)), out);
        return out.getBuffer().length();
    }
}
