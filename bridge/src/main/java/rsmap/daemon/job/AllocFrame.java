// The ALLOC frame that answers a realloc (docs/protocol.md, "Dynamic reallocation"): the answer as JSON
// with its R deltas, the type's number, the reason, then the job's SGE_HGR_* lines.
package rsmap.daemon.job;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.GrantJson;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.realloc.Answer;
import rsmap.realloc.RDelta;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.daemon.state.JobId;

/** Renders only: what an answer changes is journaled and applied by {@link Reallocation}. */
final class AllocFrame {
    private static final ObjectMapper JSON = new ObjectMapper();

    private AllocFrame() {
    }

    /**
     * ALLOC: the answer as JSON, the type's number, the reason, then the job's SGE_HGR_* lines (the C
     * client reads no JSON).
     */
    static Frame of(long tid, JobId id, Answer a, HostState s) {
        ObjectNode n = JSON.createObjectNode().put("job", a.job()).put("tag", a.tag()).put("alloc_id", a.allocId())
                .put("type", a.type().code());
        List<String> hosts = new ArrayList<>(s.cluster().hosts().keySet());
        if (!a.added().isEmpty()) {
            n.set("added", GrantJson.of(a.added()));
            n.set("R_delta_add", RDelta.of(a.added(), a.addedAt(), hosts).toJson());
            var slices = s.devices.addedSlices(id, a.added()); // each added slice's MIG UUID (docs/gpus.md)
            if (slices != null) {
                n.set("mig", slices);
            }
        }
        if (!a.removed().isEmpty()) {
            n.set("removed", GrantJson.of(a.removed()));
            n.set("R_delta_sub", RDelta.of(a.removed(), a.removedAt(), hosts).toJson());
        }
        if (a.type() != Answer.Type.SUCCESS) {
            n.put("error", a.error());
        }
        Job job = s.job(id).orElse(null);
        Map<String, String> env = job == null ? Map.of() : job.env();
        if (job != null) {
            n.set("grants", GrantJson.of(job.grant()));
            n.set("releasing", GrantJson.of(job.releasing()));
            ObjectNode e = n.putObject("env");
            env.forEach(e::put);
        }
        List<String> args = new ArrayList<>();
        args.add(n.toString());
        args.add(Integer.toString(a.type().code()));
        args.add(Args.oneLine(a.error(), Args.MAX_REASON));
        env.forEach((k, v) -> args.add(k + "=" + v));
        return Frame.of(tid, Code.ALLOC.value(), args.toArray(new String[0]));
    }
}
