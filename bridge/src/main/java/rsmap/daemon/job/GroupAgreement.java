// A host's side of one group for the whole job: before a start whose request has same= with scope=job,
// the host proposes the groups it would choose and is held to the ones its authority answers.
package rsmap.daemon.job;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import rsmap.alloc.Decision;
import rsmap.alloc.GroupKeys;
import rsmap.alloc.JobSpec;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;
import rsmap.wire.Frame;

/**
 * docs/cluster.md, "One group for the whole job". The host decides the start as if alone (a job it cannot
 * start anyway costs the authority nothing), takes that decision back, and asks the authority with its
 * groups as the proposal; the answer (the first host's proposal) pins the job's scope=job requests, and
 * the start is then decided under the pin: granted in those groups or refused naming them. Without an
 * authority ({@link GlobalPart#NONE}) nothing is asked: scope=job is per host. An authority decides a
 * host's global part the same way, its global part being {@code GlobalKeys}: the job's keys are its own.
 */
public final class GroupAgreement {
    private static final ObjectMapper JSON = new ObjectMapper();

    private GroupAgreement() {
    }

    /**
     * {@code spec} held to the groups the job's other hosts are held to; {@code spec} itself when it has no
     * scope=job request, the host has no authority, or it cannot start here in any group (the start
     * then refuses it with the core's reason). Under the daemon's lock; the core is left as it was.
     */
    static JobSpec held(HostState s, GlobalPart global, JobId jobId, JobSpec spec) throws Refusal {
        if (!global.agreesGroups() || spec.request().resourceRequests().stream().noneMatch(GroupKeys::spansJob)) {
            return spec;
        }
        String id = jobId.toString();
        Decision alone = s.cluster().grantNow(spec, s.cluster().now());
        if (alone.result() != Decision.Result.GRANTED) {
            return spec;
        }
        GroupKeys mine = s.cluster().groupKeys(id);
        s.cluster().finish(id, s.cluster().now()); // a trial: nothing was journaled, nothing announced
        return mine.isEmpty() ? spec : spec.withKeys(global.groupKeys(jobId, mine));
    }

    /** JOB_KEY's argument: {host, job, task, keys: {MAP: KEY}}. */
    public static String ask(String host, JobId id, GroupKeys proposed) {
        ObjectNode arg = id.fields(JSON.createObjectNode().put("host", host));
        ObjectNode keys = arg.putObject("keys");
        proposed.byMap().forEach(keys::put);
        return arg.toString();
    }

    /** The keys of JOB_KEY's STATE {"job", "keys"}; one that does not read is the authority's fault. */
    public static GroupKeys answered(String where, List<Frame> answer) throws Refusal {
        try {
            JsonNode keys = JSON.readTree(answer.get(0).text(0)).path("keys");
            Map<String, String> out = new LinkedHashMap<>();
            for (var it = keys.fields(); it.hasNext();) {
                var e = it.next();
                if (!e.getValue().isTextual()) {
                    throw new IOException("key of " + e.getKey() + " is not a string");
                }
                out.put(e.getKey(), e.getValue().asText());
            }
            return new GroupKeys(out);
        } catch (IOException | RuntimeException e) {
            throw Refusal.unavailable("authority " + where + " answered JOB_KEY with no keys: "
                    + e.getMessage());
        }
    }
}
