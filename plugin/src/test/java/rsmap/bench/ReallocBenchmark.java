// JMH benchmark of reallocation: a realloc decision on a host of 64 instances with 100
// waiting reallocs: a new realloc arriving, and a RELEASE whose pass tries every waiting one; each also
// as the daemon will run it from JSON, the instances named in R form (read, resolved, decided).
package rsmap.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import rsmap.alloc.Cluster;
import rsmap.alloc.Grant;
import rsmap.alloc.JobSpec;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.realloc.InstanceNames;
import rsmap.realloc.Outcome;
import rsmap.realloc.Realloc;
import rsmap.realloc.ReallocRequest;
import rsmap.realloc.Reallocs;
import rsmap.request.RequestList;

@State(Scope.Thread)
@Fork(1)
@Warmup(iterations = 6, time = 1)
@Measurement(iterations = 5, time = 1)
public class ReallocBenchmark {
    ComplexTable table;
    Reallocs reallocs;
    Realloc arriving;
    Grant released;
    RequestList one;
    RequestList notG0;
    /** g0 (index 0 of node01) in R form, as R_delta_sub names it: a release's and a take-away's fields. */
    JsonNode releasedAsR;
    JsonNode takeAwayAsR;

    @Setup(Level.Trial)
    public void parse() throws Exception {
        table = ComplexTable.parse(AllocationBenchmark.TABLE);
        one = RequestList.parse("gpu=1", table);
        notG0 = RequestList.parse("gpu=1[id=!g0,memory=64G]", table);
        arriving = new Realloc("j5", "new", Optional.of(one), Optional.empty(), Grant.NONE);
        released = new Grant(Map.of("node01", Map.of("gpu", java.util.List.of("g0"))));
        String r = "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\",\"children\":{\"core\":\"\","
                + "\"gpu\":\"0\"}}],\"nodelist\":[\"node01\"],\"starttime\":0,\"expiration\":0},"
                + "\"scheduling\":{\"writer\":\"rsmapd\",\"ids\":{\"node01\":{\"gpu\":{\"0\":\"g0\"}}}}}";
        ObjectMapper json = new ObjectMapper();
        releasedAsR = json.readTree("{\"R\":" + r + "}");
        takeAwayAsR = json.readTree("{\"R\":" + r.replace("\"0\"}}]", "\"1\"}}]").replace("{\"0\":\"g0\"}",
                "{\"1\":\"g1\"}") + "}");
    }

    /**
     * 64 instances g0..g63 (characteristics as in AllocationBenchmark), each held by its own job; job j0
     * gave g0 back (pending release); 99 waiting reallocs that g0 does not suit (they pass the cheap
     * count test and fail in placement), then one that it does, last.
     */
    @Setup(Level.Invocation)
    public void state() throws Exception {
        StringBuilder b = new StringBuilder("gpu=64(");
        for (int i = 0; i < 64; i++) {
            b.append(i == 0 ? "" : " ").append('g').append(i).append("[memory=").append(i % 2 == 0 ? "80G" : "40G")
                    .append(",model=A100,numa_node=").append(i % 4).append(']');
        }
        Cluster c = new Cluster(table);
        c.configure("node01", ComplexValues.parse(b.append(')').toString(), table), 0);
        for (int i = 0; i < 64; i++) {
            c.submit(new JobSpec("j" + i, RequestList.parse("gpu=1[id=g" + i + "]", table), Map.of("node01", 1),
                    "node01", JobSpec.UNLIMITED, Optional.empty(), false), 0);
        }
        reallocs = new Reallocs(c);
        reallocs.realloc(new Realloc("j0", "give", Optional.empty(), Optional.empty(), released), 0);
        for (int k = 0; k < 100; k++) {
            reallocs.realloc(new Realloc("j" + (1 + k % 63), "w" + k, Optional.of(k < 99 ? notG0 : one),
                    Optional.empty(), Grant.NONE), 0);
        }
    }

    /** A realloc arriving while 100 wait: tried at once, it waits (nothing is free). */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Outcome reallocArrivingWith100Waiting() {
        return reallocs.realloc(arriving, 1);
    }

    /** RELEASE of one instance: the pass tries all 100 waiting reallocs; the last one is met. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Outcome releaseTriesAll100Waiting() {
        Outcome o = reallocs.release("j0", released, 1);
        if (o.events().size() != 1) {
            throw new IllegalStateException("expected exactly the last waiting realloc met: " + o.events());
        }
        return o;
    }

    /**
     * A take-away arriving from JSON while 100 wait, in R form: read, the R parsed and resolved against
     * the host, then decided (met at once: j1 holds g1).
     */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Outcome takeAwayInRFormWith100Waiting() throws ParseException {
        Realloc r = ReallocRequest.parse(takeAwayAsR, "j1", "r", reallocs.cluster(), Limits.DEFAULT);
        return reallocs.realloc(r, 1);
    }

    /** RELEASE of one instance named in R form: read, resolved, then the pass over all 100 waiting reallocs. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Outcome releaseInRFormTriesAll100Waiting() throws ParseException {
        Grant ids = InstanceNames.read(releasedAsR).resolve(reallocs.cluster(), Limits.DEFAULT);
        Outcome o = reallocs.release("j0", ids, 1);
        if (o.events().size() != 1) {
            throw new IllegalStateException("expected exactly the last waiting realloc met: " + o.events());
        }
        return o;
    }
}
