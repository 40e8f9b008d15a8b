// The authority's commands from the hosts: REGISTER, HOST_EVENT and RECONCILE, and the
// cluster's state for `rsmap status --cluster`. Grants of the global maps are JOB_START/JOB_END with "host".
package rsmap.daemon.authority;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import rsmap.ParseException;
import rsmap.alloc.Decision;
import rsmap.alloc.Grant;
import rsmap.daemon.config.Names;
import rsmap.daemon.job.JobLifecycle;
import rsmap.daemon.records.JournalFields;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.GrantJson;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

/**
 * A host registers after every connect (its maps and jobs: the view {@link ClusterView} keeps), then
 * reconciles: the authority frees the global grants of the host's jobs the host no longer holds, and
 * names the host's jobs whose global grant it does not know (the host refuses them new global instances
 * until an admin decides: never silently doubled). Then the host's grant and release events follow.
 * Only root and the admin user (a host daemon's MUNGE-proven uid) may. Called under the daemon's lock.
 */
public final class Authority {
    /** Workers of an authority's server: the commands waiting for one force of the journal at most. */
    public static final int WORKERS = 64;

    private static final ObjectMapper JSON = new ObjectMapper();
    static final Set<String> REGISTER_KEYS = Set.of("host", "state");
    static final Set<String> EVENT_KEYS = Set.of("host", "diffs");
    /** {@code keys}: the host's jobs holding scope=job group keys ({@link JobKeys#reconciled}). */
    static final Set<String> RECONCILE_KEYS = Set.of("host", "jobs", "keys");

    private final HostState s;
    private final JobLifecycle lifecycle;
    private final LogBook log;
    public final ClusterView view = new ClusterView();
    /** PLACE: placement over the view. */
    public final Placing placing;
    /** Which host each registered connection speaks for. */
    private final Map<Session, String> sessions = new IdentityHashMap<>();

    public Authority(HostState s, JobLifecycle lifecycle, LogBook log) {
        this.s = s;
        this.lifecycle = lifecycle;
        this.log = log;
        this.placing = new Placing(s, view, log);
    }

    /** REGISTER {host, state}: STATE {"authority", "global_maps"}. */
    public List<Frame> register(Frame c, Session session) throws Refusal {
        Args a = Args.of(Code.REGISTER.name(), c, REGISTER_KEYS);
        String host = host(a);
        JsonNode state = a.node().get("state");
        if (state == null || !state.isObject()) {
            throw Refusal.malformed("REGISTER needs \"state\": the host's state as its QUERY answers it");
        }
        view.register(host, state);
        sessions.put(session, host);
        log.note(Log.Level.INFO, "host " + host + " registered (" + state.path("jobs").size() + " jobs)");
        ObjectNode answer = JSON.createObjectNode().put("authority", true);
        ArrayNode maps = answer.putArray("global_maps");
        s.mapNames().forEach(maps::add);
        return List.of(Frame.of(c.tid(), Code.STATE.value(), answer.toString()));
    }

    /**
     * HOST_EVENT {host, diffs}: the host's events since its last, in order (a host sends them in batches,
     * and an empty batch as its keepalive).
     */
    public List<Frame> event(Frame c) throws Refusal {
        Args a = Args.of(Code.HOST_EVENT.name(), c, EVENT_KEYS);
        String host = host(a);
        JsonNode diffs = a.node().get("diffs");
        if (diffs == null || !diffs.isArray()) {
            throw Refusal.malformed("HOST_EVENT needs \"diffs\": the host's events, in order");
        }
        for (JsonNode diff : diffs) {
            if (!diff.isObject()) {
                throw Refusal.malformed("HOST_EVENT: every one of \"diffs\" is an event's JSON object");
            }
        }
        for (JsonNode diff : diffs) {
            view.apply(host, diff);
        }
        return List.of();
    }

    /**
     * RECONCILE {host, jobs: {JOB: global grant}}: STATE {"freed", "unknown", "differs"}. What the
     * authority holds for the host's jobs that the host does not list is freed (the host ended them, or
     * never got the answer); a job the host lists that the authority holds no grant of, or another one, is
     * named: its instances are held for it when free (never granted twice), until an admin ends it.
     */
    public List<Frame> reconcile(Frame c) throws Refusal {
        Args a = Args.of(Code.RECONCILE.name(), c, RECONCILE_KEYS);
        String host = host(a);
        JsonNode jobs = a.node().get("jobs");
        if (jobs == null || !jobs.isObject()) {
            throw Refusal.malformed("RECONCILE needs \"jobs\": job -> its grant of global maps");
        }
        // The host's own name of each of its jobs, as this authority holds it (HOST:JOB); null: no job id at all.
        Map<String, JobId> named = new java.util.LinkedHashMap<>();
        jobs.fieldNames().forEachRemaining(k -> named.put(k, JobId.parse(k).filter(j -> j.host().isEmpty())
                .map(j -> j.onHost(host)).orElse(null)));
        java.util.Set<JobId> listed = new java.util.HashSet<>(named.values());
        ArrayNode freed = JSON.createArrayNode();
        for (Job j : new ArrayList<>(s.jobs())) {
            JobId id = j.id();
            if (id.host().equals(host) && !listed.contains(id)) {
                lifecycle.end(id, "reconciled: host " + host + " no longer holds it");
                freed.add(id.local().toString());
            }
        }
        ArrayNode unknown = JSON.createArrayNode();
        ArrayNode differs = JSON.createArrayNode();
        ObjectNode heldForPending = JSON.createObjectNode();
        ArrayNode notHeld = JSON.createArrayNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = jobs.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            JobId id = named.get(e.getKey());
            Job held = id == null ? null : s.job(id).orElse(null);
            if (e.getValue().isTextual() && e.getValue().asText().equals("pending")) {
                // The host did not get what it holds on disk: what this authority holds is its answer.
                if (held != null) {
                    heldForPending.set(e.getKey(), GrantJson.of(held.grant()));
                } else {
                    notHeld.add(e.getKey());
                }
            } else if (held == null) {
                unknown.add(e.getKey());
                // Never doubled: while an admin decides, the instances the host says its job holds are held
                // here for it when they are free (grantable to nobody else), and said so.
                try {
                    if (id != null && hold(id, JournalFields.grant(e.getValue()))) {
                        log.note(Log.Level.ERROR, "job " + id + " holds " + e.getValue()
                                + " by its host's word, unknown here: held for it until an admin ends it (JOB_END)");
                    }
                } catch (java.io.IOException x) {
                    log.note(Log.Level.ERROR, "host " + host + ": job " + e.getKey() + "'s grant does not read: "
                            + x.getMessage());
                }
            } else if (!GrantJson.of(held.grant()).equals(e.getValue())) {
                differs.add(e.getKey());
            }
        }
        if (!freed.isEmpty() || !unknown.isEmpty() || !differs.isEmpty()) {
            log.note(unknown.isEmpty() && differs.isEmpty() ? Log.Level.INFO : Log.Level.ERROR, "host " + host
                    + " reconciled: freed " + freed + ", unknown here " + unknown + ", held otherwise here " + differs);
        }
        ObjectNode answer = JSON.createObjectNode();
        answer.set("freed", freed);
        answer.set("unknown", unknown);
        answer.set("differs", differs);
        answer.set("held", heldForPending);
        answer.set("not_held", notHeld);
        return List.of(Frame.of(c.tid(), Code.STATE.value(), answer.toString()));
    }

    /**
     * Holds exactly {@code grant} for job {@code id} (HOST:JOB) that a host says it holds and this
     * authority does not know (its state was lost), when those instances are free; journaled like a
     * grant, ended by the job's JOB_END. False, changing nothing, when they are not free.
     */
    private boolean hold(JobId id, Grant grant) {
        if (grant.isEmpty() || s.holds(id)) {
            return false;
        }
        StringBuilder request = new StringBuilder();
        grant.byHost().values().forEach(maps -> maps.forEach((map, ids) -> request.append(request.length() == 0 ? ""
                : ",").append(map).append('=').append(ids.size())));
        try {
            s.prepare(s.cluster(), id);
            Decision d = s.cluster().restore(s.spec(id, request.toString(), 1), grant, s.cluster().now());
            if (d.isRefused()) {
                return false;
            }
            return lifecycle.adopt(new Job(id, "", request.toString(), 1, grant, Grant.NONE, Grant.NONE,
                    grant.environment(s.host()), Map.of()));
        } catch (ParseException e) {
            return false;
        }
    }

    /** The whole cluster: the global maps with holders HOST:JOB, and every registered host's view. */
    public ObjectNode cluster(ObjectNode globalState) {
        globalState.set("hosts", view.toJson());
        return globalState;
    }

    /** A host's connection closed. */
    public void closed(Session session) {
        String host = sessions.remove(session);
        if (host != null && !sessions.containsValue(host)) {
            view.disconnected(host);
        }
    }

    private static String host(Args a) throws Refusal {
        String host = a.string("host", "");
        if (!Names.host(host)) {
            throw Refusal.malformed(a.command() + ": \"host\" is a host name, not " + Args.quote(host));
        }
        return host;
    }
}
