// What a host tells its authority after every connect - REGISTER (its whole state) and RECONCILE (its jobs'
// global grants) - and what it learns back: jobs unconfirmed, pending starts resolved, grants freed.
package rsmap.daemon.link;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.alloc.Grant;
import rsmap.daemon.job.EventHub;
import rsmap.daemon.job.Views;
import rsmap.daemon.records.JournalFields;
import rsmap.daemon.state.Access;
import rsmap.daemon.state.GrantJson;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.wire.Client;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.daemon.state.JobId;

/** docs/cluster.md, "the host reconnects". The snapshot is taken under the daemon's lock, the calls outside it. */
final class AuthorityHandshake {
    private static final ObjectMapper JSON = new ObjectMapper();

    private AuthorityHandshake() {
    }

    /** A snapshot of the host for one handshake: its state, and its jobs' global grants. */
    record Hello(String register, String reconcile, Map<String, String> remote) {
    }

    /**
     * What the authority answered: the jobs whose global grant it did not confirm (they get no new global
     * instance until an admin decides) and what it said of the pending starts (held: the grant; not held:
     * empty).
     */
    record Answer(Set<String> unconfirmed, Map<JobId, Optional<Grant>> said) {
    }

    /** The snapshot; called under the daemon's lock. */
    static Hello hello(HostState s, Access access) {
        Session.Peer root = new Session.Peer("root", "root", 0, 0, 0);
        ObjectNode state = Views.state(s, access, root, EventHub.Filters.NONE, null);
        // The authority's PLACE rebuilds this host's maps from them.
        state.put("complex_values", String.valueOf(s.cluster().hosts().get(s.host())));
        ObjectNode jobs = JSON.createObjectNode();
        Map<String, String> remote = new HashMap<>();
        for (JobId id : s.pendingJobs()) {
            jobs.put(id.toString(), "pending"); // the authority says what it holds for it
        }
        com.fasterxml.jackson.databind.node.ArrayNode keyed = JSON.createArrayNode();
        for (Job j : s.jobs()) {
            if (!j.remote().isEmpty()) {
                jobs.set(j.id().toString(), GrantJson.of(j.remote()));
                remote.put(j.id().toString(), j.remote().byHost().toString());
            }
            if (!s.cluster().groupKeys(j.id().toString()).isEmpty()) {
                keyed.add(j.id().toString()); // held to scope=job groups: the authority lets go of the others
            }
        }
        ObjectNode reconcile = JSON.createObjectNode().put("host", s.host()).set("jobs", jobs);
        if (!keyed.isEmpty()) {
            reconcile.set("keys", keyed);
        }
        return new Hello(JSON.createObjectNode().put("host", s.host()).<ObjectNode>set("state", state).toString(),
                reconcile.toString(), remote);
    }

    /** REGISTER then RECONCILE on {@code channel}; each answer's oddities logged against {@code where}. */
    static Answer run(AuthorityChannel channel, Hello hello, String where, LogBook log)
            throws IOException, Client.Refusal {
        channel.call(Code.REGISTER, hello.register());
        List<Frame> r = channel.call(Code.RECONCILE, hello.reconcile());
        JsonNode answer = JSON.readTree(r.get(0).text(0));
        Set<String> unconfirmed = new LinkedHashSet<>();
        for (String key : new String[] {"unknown", "differs"}) {
            for (JsonNode id : answer.path(key)) {
                unconfirmed.add(id.asText());
                log.note(Log.Level.ERROR, "job " + id.asText() + " holds global instances "
                        + hello.remote().getOrDefault(id.asText(), "?") + " that the authority " + where
                        + (key.equals("unknown") ? " does not know" : " holds otherwise")
                        + ": it gets no new global instance until an admin decides (JOB_END frees it)");
            }
        }
        Map<JobId, Optional<Grant>> said = new LinkedHashMap<>(); // a job that is none is no job of this host's
        for (Iterator<Map.Entry<String, JsonNode>> it = answer.path("held").fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            Grant g = JournalFields.grant(e.getValue());
            JobId.parse(e.getKey()).ifPresent(id -> said.put(id, Optional.of(g)));
        }
        for (JsonNode id : answer.path("not_held")) {
            JobId.parse(id.asText()).ifPresent(j -> said.put(j, Optional.empty()));
        }
        if (answer.path("freed").size() > 0) {
            log.note(Log.Level.INFO, "the authority freed the global instances of jobs that ended here: "
                    + answer.path("freed"));
        }
        return new Answer(unconfirmed, said);
    }
}
