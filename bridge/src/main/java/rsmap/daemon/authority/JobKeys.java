// The authority's side of one group for the whole job: JOB_KEY answers a host the group keys recorded
// for its job (the first host's proposal wins), and a host's global part is held to them (GlobalKeys),
// journaled before the answer; a host's JOB_END or reconciliation lets go of them, and the job's last
// host makes the authority forget them.
package rsmap.daemon.authority;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.alloc.GroupKeys;
import rsmap.daemon.records.JournalRecord;
import rsmap.daemon.records.Records;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.JobGroups;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.wire.Code;
import rsmap.wire.Frame;

/**
 * docs/cluster.md, "One group for the whole job". Commands run one at a time under the daemon's lock, so
 * of two hosts asking at the same moment one is first: its proposal is recorded and the other is
 * answered with it. A key is recorded per map: a host whose request names a map no host asked about yet
 * adds its proposal for that map; a recorded key never changes while any host holds the job.
 */
public final class JobKeys {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final Set<String> KEYS = Set.of("host", "job", "task", "keys");
    /** The most maps one JOB_KEY may name (a request names each map once per scope). */
    static final int MAX_MAPS = 64;

    private final HostState s;
    private final Records records;
    private final LogBook log;
    /** See {@link #spare}. */
    private String sparingHost;
    private Set<JobId> spared = Set.of();

    public JobKeys(HostState s, Records records, LogBook log) {
        this.s = s;
        this.records = records;
        this.log = log;
    }

    /**
     * JOB_KEY {host, job, task, keys: {MAP: KEY}}: STATE {"job", "keys"}, the keys the job is held to on
     * every host (the proposal where none is recorded yet), the host counted as holding them; written to
     * the journal and forced before the answer, so that a restarted authority answers the same.
     */
    public List<Frame> ask(Frame c) throws Refusal {
        Args a = Args.of(Code.JOB_KEY.name(), c, KEYS);
        JobId id = JobId.ofHost(a);
        GroupKeys keys = held(id.host(), id, new GroupKeys(proposal(a.node().get("keys"))));
        ObjectNode answer = JSON.createObjectNode().put("job", id.local().toString()); // the frame's text
        ObjectNode k = answer.putObject("keys");
        keys.byMap().forEach(k::put);
        return List.of(Frame.of(c.tid(), Code.STATE.value(), answer.toString()));
    }

    /**
     * The keys job {@code id} ({@code JOB[.TASK]}, or {@code HOST:JOB[.TASK]}: its local part names it) is
     * held to on every host, {@code proposed} added for each map none is recorded for, {@code host} counted
     * as holding them; the record written (forced before the caller's answer) when anything changed. Both
     * a host's JOB_KEY (its own maps) and a host's JOB_START of global maps ({@link GlobalKeys}) come here:
     * one record per job, one key per map.
     */
    GroupKeys held(String host, JobId id, GroupKeys proposed) throws Refusal {
        JobId job = id.local();
        JobGroups.Held was = s.jobGroups.of(job).orElse(new JobGroups.Held(GroupKeys.NONE, Set.of()));
        Map<String, String> keys = new LinkedHashMap<>(was.keys().byMap());
        proposed.byMap().forEach(keys::putIfAbsent); // first proposal wins, map by map
        Set<String> hosts = new LinkedHashSet<>(was.hosts());
        hosts.add(host);
        JobGroups.Held now = new JobGroups.Held(new GroupKeys(keys), hosts);
        if (!now.equals(was)) {
            records.write(JournalRecord.Keyed.of(job, now)); // refused (unavailable) when it cannot be written: nothing changed
            s.jobGroups.put(job, now);
            log.note(Log.Level.INFO, "job " + job + ": host " + host + " proposed " + proposed
                    + ", held to " + now.keys() + " on " + now.hosts());
        }
        return now.keys();
    }

    private static Map<String, String> proposal(JsonNode keys) throws Refusal {
        if (keys == null || !keys.isObject() || keys.size() == 0 || keys.size() > MAX_MAPS) {
            throw Refusal.malformed("JOB_KEY needs \"keys\": map -> the group key the "
                    + "host would choose, 1 to " + MAX_MAPS + " maps");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (var it = keys.fields(); it.hasNext();) {
            var e = it.next();
            if (e.getKey().isEmpty() || e.getKey().length() > 256 || !e.getValue().isTextual()
                    || e.getValue().asText().isEmpty() || e.getValue().asText().length() > 256) {
                throw Refusal.malformed("JOB_KEY: \"keys\" maps a map name to a group key "
                        + "(1 to 256 characters each), not " + Args.quote(e.getKey()) + ": " + Args.quote(e.getValue().toString()));
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    /**
     * While host {@code host} reconciles (null: no one), the jobs it lists as held to groups by its own
     * maps: the end of a global part of one of them, freed by that reconciliation, does not count the host
     * out. Under the daemon's lock, like every call here.
     */
    public void spare(String host, Set<JobId> listed) {
        sparingHost = host;
        spared = Set.copyOf(listed);
    }

    /** Host {@code host}'s part of job {@code local} ended: it holds the keys no more; the last host's end forgets them. */
    public void left(String host, JobId local) throws Refusal {
        JobId job = local.local();
        if (host.equals(sparingHost) && spared.contains(job)) {
            return; // its own maps still hold the job's groups (RECONCILE's "keys")
        }
        JobGroups.Held was = s.jobGroups.of(job).orElse(null);
        if (was == null || !was.hosts().contains(host)) {
            return;
        }
        Set<String> hosts = new LinkedHashSet<>(was.hosts());
        hosts.remove(host);
        JobGroups.Held now = new JobGroups.Held(was.keys(), hosts);
        records.write(JournalRecord.Keyed.of(job, now));
        s.jobGroups.put(job, now);
        log.note(Log.Level.INFO, "job " + job + ": host " + host + " ended its part"
                + (hosts.isEmpty() ? "; its groups " + was.keys() + " are forgotten" : ", still on " + hosts));
    }

    /** RECONCILE's {@code "keys"}: the host's jobs held to scope=job groups (none when absent). */
    public static Set<JobId> listed(Frame c) throws Refusal {
        JsonNode listed = Args.object(c).get("keys");
        Set<JobId> out = new HashSet<>();
        if (listed == null) {
            return out;
        }
        if (!listed.isArray()) {
            throw Refusal.malformed("RECONCILE: \"keys\" lists the host's jobs held to "
                    + "scope=job groups, not " + Args.quote(listed.toString()));
        }
        for (JsonNode j : listed) {
            Optional<JobId> id = j.isTextual() ? JobId.parse(j.asText()).filter(x -> x.host().isEmpty()) : Optional.empty();
            if (id.isEmpty()) {
                throw Refusal.malformed("RECONCILE: \"keys\" holds a job id, not "
                        + Args.quote(j.toString()));
            }
            out.add(id.get());
        }
        return out;
    }

    /**
     * A host's reconciliation, after the authority freed the global grants of the host's jobs it no longer
     * holds: of the jobs it holds keys of here, those it neither lists ({@code listed}, its jobs' names)
     * nor holds a global part of here ended while it was away or never started; it lets go of them. A
     * global part held here to a job's groups counts the host in (a key whose record was lost, or a grant
     * older than the record, is learnt from it); one in another group than the job's is logged (nothing
     * is taken away).
     */
    public void reconciled(String host, Set<JobId> listed) throws Refusal {
        for (JobId local : s.jobGroups.heldBy(host)) {
            if (!listed.contains(local) && !s.holds(local.onHost(host))) {
                left(host, local);
            }
        }

        for (Job j : new java.util.ArrayList<>(s.jobs())) {
            JobId id = j.id();
            GroupKeys holds = s.cluster().groupKeys(id.toString());
            if (!id.host().equals(host) || holds.isEmpty()) {
                continue;
            }
            GroupKeys recorded = held(host, id, holds);
            holds.byMap().forEach((map, key) -> {
                if (!recorded.byMap().get(map).equals(key)) {
                    log.note(Log.Level.ERROR, "job " + j.id() + " holds " + map + " group " + key + " here, but the job "
                            + "is held to " + map + "=" + recorded.byMap().get(map) + " on its other hosts");
                }
            });
        }
    }

    /** For QUERY of the cluster: {JOB: {"keys", "hosts"}}. */
    public ObjectNode view() {
        ObjectNode v = JSON.createObjectNode();
        s.jobGroups.all().forEach((job, h) -> {
            ObjectNode j = v.putObject(job.toString());
            h.keys().byMap().forEach(j.putObject("keys")::put);
            h.hosts().forEach(j.putArray("hosts")::add);
        });
        return v;
    }
}
