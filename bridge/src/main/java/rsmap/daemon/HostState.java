// The allocation state of this host as the daemon keeps it: the core's Cluster under the current
// configuration generation, the jobs holding grants, and what is parsed once and reused.
package rsmap.daemon;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.JobSpec;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.map.Instance;

/** Mutable; every change happens under the daemon's lock ({@link Daemon}). */
final class HostState {
    final Config config;
    final ComplexTable table;
    final Limits limits;
    /** Jobs holding a grant here, in the order they were granted. */
    final Map<String, Job> jobs = new LinkedHashMap<>();
    /**
     * Jobs whose global part was being asked of the authority when their start was forced, and whose
     * answer is not on disk (issue 14): the authority says at the next connect (JournalRecord.PENDING).
     */
    final java.util.Set<String> remotePending = new java.util.LinkedHashSet<>();
    /**
     * Jobs that hold nothing here but entered (the starter enters every job, issue 11): under a closed
     * policy with no granted device until JOB_END or reconciliation. Not journaled: after a restart a
     * JOB_END still removes the policy by the job's name.
     */
    /** Ended jobs with processes left in their cgroup, under a closed policy until they exit ({@link Leftovers}). */
    final Map<String, java.util.List<Long>> leftovers = new LinkedHashMap<>();
    final Map<String, Job> bare = new LinkedHashMap<>();
    Cluster cluster;
    /** Reallocation over {@link #cluster} (issue 13): a new one with every new cluster ({@link #install}). */
    rsmap.realloc.Reallocs reallocs;
    /** Whether running jobs may reallocate, and the order waiting reallocs are served (rsmapd.conf, RELOAD). */
    boolean reallocOn;
    rsmap.realloc.Policy reallocPolicy;
    /** The highest alloc_id the journal makes good for: answers after a restart go on above it. */
    long lastAllocId;
    String hostValues;
    String globalValues;
    /** The configuration generation: 1 at the first start, one more per accepted change. */
    long generation;
    /**
     * This host's attributes (issue 15): the discovered ones with rsmapd.conf's attributes over them, read
     * with the declared types; fixed from start to stop. NONE on an authority.
     */
    rsmap.node.NodeAttributes attributes = rsmap.node.NodeAttributes.NONE;
    /** The host's slot capacity: rsmapd.conf's slots, else the discovered cpus; empty: no slot limit. */
    java.util.OptionalInt slots = java.util.OptionalInt.empty();
    /** This host as filters see it, made once from the two above. */
    private rsmap.node.Node node;
    /** QUERY's answer for root and the admin, null after any change (see {@link Commands}). */
    volatile String stateCache;
    /** Requests already parsed against this table (immutable values), by their text. */
    private final Map<String, rsmap.request.RequestList> parsedRequests = new HashMap<>();
    private final Map<String, ComplexValues> parsedValues = new HashMap<>();

    HostState(Config config, ComplexTable table) {
        this.config = config;
        this.table = table;
        this.limits = Limits.DEFAULT.withMaxRsmapIds(config.maxRsmapIds());
        this.reallocOn = config.realloc();
        this.reallocPolicy = rsmap.realloc.Policy.named(config.reallocPolicy()).orElseThrow();
    }

    /**
     * Sets the attributes from what {@code found} discovered (when discover = on) and the configured
     * ones over them. A discovered value its declared type does not read (an admin declared kernel a
     * number) is left out, logged; a configured one was checked when the file was read.
     */
    void describe(Discovery.Result found, LogBook log) throws ParseException {
        if (config.isAuthority()) {
            return;
        }
        Map<String, String> text = new LinkedHashMap<>();
        if (config.discover()) {
            found.problems().forEach(p -> log.note(Log.Level.WARNING, p));
            for (Map.Entry<String, String> e : found.attributes().entrySet()) {
                try {
                    rsmap.node.NodeAttributes.parse(Map.of(e.getKey(), e.getValue()), config.attributeTypes(), limits);
                    text.put(e.getKey(), e.getValue());
                } catch (ParseException x) {
                    log.note(Log.Level.WARNING, "attribute " + e.getKey() + " not discovered: " + x.problem());
                }
            }
        }
        text.putAll(config.attributes());
        attributes = rsmap.node.NodeAttributes.parse(text, config.attributeTypes(), limits);
        slots = config.slots();
        if (slots.isEmpty() && attributes.get("cpus").orElse(null) instanceof rsmap.node.Quantity q) {
            double cpus = q.value();
            if (cpus >= 0 && cpus <= 1_000_000 && cpus == Math.rint(cpus)) {
                slots = java.util.OptionalInt.of((int) cpus);
            }
        }
        node = new rsmap.node.Node(config.host(), slots, attributes);
        if (!attributes.values().isEmpty()) {
            log.note(Log.Level.INFO, "host " + config.host() + " attributes " + attributes.text() + (slots.isPresent()
                    ? " slots=" + slots.getAsInt() : ""));
        }
    }

    /** This host as filters see it. */
    rsmap.node.Node node() {
        if (node == null) {
            node = new rsmap.node.Node(config.host(), slots, attributes);
        }
        return node;
    }

    /** Reallocation over {@code next}, with this daemon's settings (its caller says where alloc ids go on). */
    rsmap.realloc.Reallocs reallocsOver(Cluster next) {
        rsmap.realloc.Reallocs r = new rsmap.realloc.Reallocs(next);
        r.setEnabled(reallocOn);
        r.setPolicy(reallocPolicy);
        return r;
    }

    /** {@code next} (with its reallocation {@code r}) becomes the state's core. */
    void install(Cluster next, rsmap.realloc.Reallocs r) {
        cluster = next;
        reallocs = r;
    }

    String host() {
        return config.host();
    }

    /** The state changed: what QUERY answered from the cache is stale. */
    void changed() {
        stateCache = null;
    }

    /** complex_values parsed once per text: start-up checks the file's, then replays the journal's, the same. */
    ComplexValues values(String text) throws ParseException {
        ComplexValues v = parsedValues.get(text);
        if (v == null) {
            v = ComplexValues.parse(text, table, limits);
            if (parsedValues.size() >= 8) {
                parsedValues.clear(); // generations come and go: keep the few of late
            }
            parsedValues.put(text, v);
        }
        return v;
    }

    /** A core for this host (and the global host, where it has maps) configured with these values. */
    Cluster build(String host, String global) throws ParseException {
        Cluster c = new Cluster(table);
        if (config.isAuthority()) {
            // The cluster's global maps; the hosts whose jobs hold them join as they ask (prepare).
            c.configure(Cluster.GLOBAL, values(global), 0);
            return c;
        }
        c.configure(config.host(), values(host), 0);
        ComplexValues g = values(global);
        if (!g.entries().isEmpty()) {
            c.configure(Cluster.GLOBAL, g, 0);
        }
        return c;
    }

    /** The host a job runs on: this one, or on an authority the HOST of its HOST:JOB. */
    String hostOf(String id) {
        int colon = id.indexOf(':');
        return config.isAuthority() && colon > 0 ? id.substring(0, colon) : config.host();
    }

    /**
     * On an authority, {@code c} knows the host of job {@code id} (with no maps of its own: the host's
     * maps are its own rsmapd's), so that the core can place the job's global part; nothing elsewhere.
     */
    void prepare(Cluster c, String id) throws ParseException {
        String host = hostOf(id);
        if (config.isAuthority() && !c.knows(host)) {
            c.configure(host, values("NONE"), c.now());
        }
    }

    /** A job start on this host as the core takes it. */
    JobSpec spec(String id, String request, int slots) throws ParseException {
        String host = hostOf(id);
        return new JobSpec(id, split(parsed(request), false), Map.of(host, slots), host, JobSpec.UNLIMITED,
                Optional.empty(), false);
    }

    /** {@code request} read against the complex table, each text once (many jobs ask the same; a replay too). */
    private rsmap.request.RequestList parsed(String request) throws ParseException {
        rsmap.request.RequestList parsed = parsedRequests.get(request);
        if (parsed == null) {
            parsed = rsmap.request.RequestList.parse(request, table, limits);
            if (parsedRequests.size() < 1024) {
                parsedRequests.put(request, parsed);
            }
        }
        return parsed;
    }

    /**
     * With an authority (issue 14), the part of {@code request} this host decides ({@code global} false:
     * everything but the maps it does not have, which are the cluster's global maps) or the authority
     * decides ({@code global} true). Without one, the whole request is this host's. A map both this host
     * and the global host serve is this host's.
     */
    rsmap.request.RequestList split(rsmap.request.RequestList request, boolean global) {
        if (config.authority() == null) {
            return global ? new rsmap.request.RequestList(List.of()) : request;
        }
        Set<String> local = mapNames();
        List<rsmap.request.Request> part = new java.util.ArrayList<>();
        for (rsmap.request.Request r : request.requests()) {
            boolean isGlobal = r instanceof rsmap.request.ResourceRequest && !local.contains(r.name());
            if (isGlobal == global) {
                part.add(r);
            }
        }
        return new rsmap.request.RequestList(part);
    }

    /** The global part of {@code request} as text (empty when none), for the authority. */
    String globalPart(String request) throws ParseException {
        return config.authority() == null ? "" : split(parsed(request), true).toString();
    }

    /**
     * Puts every held grant, exactly, into {@code next} (a new configuration generation): what each job
     * uses and what it is to give back; empty when all fit, else which running job holds what {@code
     * next} cannot give back.
     */
    Optional<String> restoreAll(rsmap.realloc.Reallocs next) {
        for (Job j : jobs.values()) {
            rsmap.realloc.Outcome o;
            try {
                prepare(next.cluster(), j.id());
                o = next.restore(spec(j.id(), j.request(), j.slots()), j.grant(), j.releasing(), 0);
            } catch (ParseException e) {
                return Optional.of("running job " + j.id() + " holds: its request no longer parses: " + e.getMessage());
            }
            if (!o.ok()) {
                return Optional.of("running job " + j.id() + " holds: " + o.error());
            }
        }
        return Optional.empty();
    }

    /** The names of this host's maps, in configured order. */
    Set<String> mapNames() {
        return new LinkedHashSet<>(cluster.instances(config.host()).keySet());
    }

    /** The instances behind a job's grant on this host (and the global host), for its device policy. */
    List<Instance> grantedInstances(Job job) {
        return cluster.instancesOf(job.id());
    }

    /** Whether any instance of this host or the global host lists devices: then every job's policy is closed. */
    boolean devicesListed() {
        return rsmap.device.DevicePolicy.listsDevices(cluster.hosts().values());
    }
}
