// The authority's side of one group for the whole job: JOB_KEY answers a host the group keys recorded
// for its job (the first host's proposal wins), journaled before the answer; a host's JOB_END or
// reconciliation lets go of them, and the job's last host makes the authority forget them.
package rsmap.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import rsmap.alloc.GroupKeys;
import rsmap.wire.Category;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

/**
 * docs/cluster.md, "One group for the whole job". Commands run one at a time under the daemon's lock, so
 * of two hosts asking at the same moment one is first: its proposal is recorded and the other is
 * answered with it. A key is recorded per map: a host whose request names a map no host asked about yet
 * adds its proposal for that map; a recorded key never changes while any host holds the job.
 */
final class JobKeys {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final Set<String> KEYS = Set.of("host", "job", "task", "keys");
    /** The most maps one JOB_KEY may name (a request names each map once per scope). */
    static final int MAX_MAPS = 64;

    private final HostState s;
    private final Records records;
    private final LogBook log;

    JobKeys(HostState s, Records records, LogBook log) {
        this.s = s;
        this.records = records;
        this.log = log;
    }

    /**
     * JOB_KEY {host, job, task, keys: {MAP: KEY}}: STATE {"job", "keys"}, the keys the job is held to on
     * every host (the proposal where none is recorded yet), the host counted as holding them; written to
     * the journal and forced before the answer, so that a restarted authority answers the same.
     */
    List<Frame> ask(Frame c) throws Session.CommandException {
        Args a = Args.of(Code.JOB_KEY.name(), c, KEYS);
        JobId id = JobId.ofHost(a);
        String job = id.local().toString();
        Map<String, String> proposed = proposal(a.node().get("keys"));
        JobGroups.Held was = s.jobGroups.of(job).orElse(new JobGroups.Held(GroupKeys.NONE, Set.of()));
        Map<String, String> keys = new LinkedHashMap<>(was.keys().byMap());
        proposed.forEach(keys::putIfAbsent); // first proposal wins, map by map
        Set<String> hosts = new LinkedHashSet<>(was.hosts());
        hosts.add(id.host());
        JobGroups.Held now = new JobGroups.Held(new GroupKeys(keys), hosts);
        if (!now.equals(was)) {
            records.write(now.record(job)); // refused (unavailable) when it cannot be written: nothing changed
            s.jobGroups.put(job, now);
            log.note(Log.Level.INFO, "job " + job + ": host " + id.host() + " proposed " + new GroupKeys(proposed)
                    + ", held to " + now.keys() + " on " + now.hosts());
        }
        ObjectNode answer = JSON.createObjectNode().put("job", job);
        ObjectNode k = answer.putObject("keys");
        now.keys().byMap().forEach(k::put);
        return List.of(Frame.of(c.tid(), Code.STATE.value(), answer.toString()));
    }

    private static Map<String, String> proposal(JsonNode keys) throws Session.CommandException {
        if (keys == null || !keys.isObject() || keys.size() == 0 || keys.size() > MAX_MAPS) {
            throw new Session.CommandException(Category.MALFORMED, "JOB_KEY needs \"keys\": map -> the group key the "
                    + "host would choose, 1 to " + MAX_MAPS + " maps");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (var it = keys.fields(); it.hasNext();) {
            var e = it.next();
            if (e.getKey().isEmpty() || e.getKey().length() > 256 || !e.getValue().isTextual()
                    || e.getValue().asText().isEmpty() || e.getValue().asText().length() > 256) {
                throw new Session.CommandException(Category.MALFORMED, "JOB_KEY: \"keys\" maps a map name to a group key "
                        + "(1 to 256 characters each), not " + Args.quote(e.getKey()) + ": " + Args.quote(e.getValue().toString()));
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    /** Host {@code host}'s part of job {@code local} ended: it holds the keys no more; the last host's end forgets them. */
    void left(String host, JobId local) throws Session.CommandException {
        String job = local.local().toString();
        JobGroups.Held was = s.jobGroups.of(job).orElse(null);
        if (was == null || !was.hosts().contains(host)) {
            return;
        }
        Set<String> hosts = new LinkedHashSet<>(was.hosts());
        hosts.remove(host);
        JobGroups.Held now = new JobGroups.Held(was.keys(), hosts);
        records.write(now.record(job));
        s.jobGroups.put(job, now);
        log.note(Log.Level.INFO, "job " + job + ": host " + host + " ended its part"
                + (hosts.isEmpty() ? "; its groups " + was.keys() + " are forgotten" : ", still on " + hosts));
    }

    /** RECONCILE's {@code "keys"}: the host's jobs held to scope=job groups (none when absent). */
    static Set<String> listed(Frame c) throws Session.CommandException {
        JsonNode listed = Args.object(c).get("keys");
        Set<String> out = new HashSet<>();
        if (listed == null) {
            return out;
        }
        if (!listed.isArray()) {
            throw new Session.CommandException(Category.MALFORMED, "RECONCILE: \"keys\" lists the host's jobs held to "
                    + "scope=job groups, not " + Args.quote(listed.toString()));
        }
        for (JsonNode j : listed) {
            if (!j.isTextual() || JobId.parse(j.asText()).filter(id -> id.host().isEmpty()).isEmpty()) {
                throw new Session.CommandException(Category.MALFORMED, "RECONCILE: \"keys\" holds a job id, not "
                        + Args.quote(j.toString()));
            }
            out.add(j.asText());
        }
        return out;
    }

    /**
     * A host's reconciliation: of the jobs it holds keys of here, those it no longer lists ({@code
     * listed}, its jobs' names) ended while it was away or never started; it lets go of them.
     */
    void reconciled(String host, Set<String> listed) throws Session.CommandException {
        for (String job : s.jobGroups.heldBy(host)) {
            if (!listed.contains(job)) {
                left(host, JobId.parse(job).orElseThrow());
            }
        }
    }

    /** For QUERY of the cluster: {JOB: {"keys", "hosts"}}. */
    ObjectNode view() {
        ObjectNode v = JSON.createObjectNode();
        s.jobGroups.all().forEach((job, h) -> {
            ObjectNode j = v.putObject(job);
            h.keys().byMap().forEach(j.putObject("keys")::put);
            h.hosts().forEach(j.putArray("hosts")::add);
        });
        return v;
    }
}
