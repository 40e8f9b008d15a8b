// JMH benchmarks of the resource-map language: parsing a 512-instance host and a request, and matching
// one instance. Target: a 512-instance host's complex_values parses in under 1 ms.
// Run: mvn -B -q -Pbench -pl plugin test-compile exec:exec -Dbench.args='LanguageBenchmark -f 1'
package rsmap.bench;

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
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.map.Instance;
import rsmap.request.RequestList;
import rsmap.request.ResourceRequest;

/**
 * Average time per operation in microseconds. Short defaults (1 fork, 3 + 5 one-second iterations)
 * keep a run on a small machine under a minute per benchmark; JMH options on the command line win.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class LanguageBenchmark {
    static final int INSTANCES = 512;
    static final String REQUEST = "gpu=2[id=(g1*|g2*)&!*b,memory=40G,numa_node=1]";
    static final String TABLE = String.join("\n",
            "gpu        gpu    RSMAP   <=  YES  HOST  0     0",
            "memory     gmem   MEMORY  <=  YES  NO    0     0",
            "model      model  CSTRING ==  YES  NO    NONE  0",
            "numa_node  numa   INT     ==  YES  NO    0     0",
            "");

    ComplexTable table;
    /** gpu=512(g0[memory=80G,model=A100,numa_node=0] g1[memory=40G,model=H100,numa_node=1] ...) */
    String host;
    /** The same shape, but no two blocks alike: every instance has its own memory and numa_node. */
    String uniqueHost;
    ResourceRequest request;
    /** g1[memory=40G,model=H100,numa_node=1]: passes id=, memory and numa_node, so every check runs. */
    Instance instance;

    @Setup
    public void setUp() throws ParseException {
        table = ComplexTable.parse(TABLE);
        StringBuilder b = new StringBuilder("gpu=").append(INSTANCES).append('(');
        for (int i = 0; i < INSTANCES; i++) {
            b.append(i == 0 ? "" : " ").append('g').append(i)
                    .append("[memory=").append(i % 2 == 0 ? "80G" : "40G")
                    .append(",model=").append(i % 2 == 0 ? "A100" : "H100")
                    .append(",numa_node=").append(i % 2).append(']');
        }
        host = b.append(')').toString();
        StringBuilder u = new StringBuilder("gpu=").append(INSTANCES).append('(');
        for (int i = 0; i < INSTANCES; i++) {
            u.append(i == 0 ? "" : " ").append('g').append(i).append("[memory=").append(1 + i).append("G,model=")
                    .append(i % 2 == 0 ? "A100" : "H100").append(",numa_node=").append(i).append(']');
        }
        uniqueHost = u.append(')').toString();
        request = RequestList.parse(REQUEST, table).resourceRequests().get(0);
        instance = ComplexValues.parse(host, table).resourceMaps().get(0).instances().get(1);
        if (!request.admits(instance)) {
            throw new IllegalStateException(REQUEST + " should admit " + instance);
        }
    }

    /** (a) The host of the 1 ms target: 512 instances, three characteristics each. */
    @Benchmark
    public ComplexValues parseHost512() throws ParseException {
        return ComplexValues.parse(host, table);
    }

    /** (a') The same with every block different, so nothing read once can be reused. */
    @Benchmark
    public ComplexValues parseHost512Unique() throws ParseException {
        return ComplexValues.parse(uniqueHost, table);
    }

    /** (b) A request with an id= expression and two characteristics. */
    @Benchmark
    public RequestList parseRequest() throws ParseException {
        return RequestList.parse(REQUEST, table);
    }

    /** (c) Matching the parsed request against one parsed instance. */
    @Benchmark
    public boolean admitsOneInstance() {
        return request.admits(instance);
    }

    /**
     * (d) Baseline for (a): one pass over the same text counting instances and characteristics, the
     * floor any parser of it pays; (a) divided by this is the parser's overhead per character.
     */
    @Benchmark
    public int scanHost512Baseline() {
        int count = 0;
        for (int i = 0; i < host.length(); i++) {
            char c = host.charAt(i);
            if (c == '[' || c == ',' || c == '=') {
                count++;
            }
        }
        return count;
    }
}
