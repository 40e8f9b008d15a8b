// The allocation state of this host as the daemon keeps it: the core's Cluster under the current
// configuration generation, the jobs holding grants, and what is parsed once and reused.
package rsmap.daemon.state;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.JobSpec;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.Discovery;
import rsmap.log.LogBook;
import rsmap.map.ComplexValues;

/**
 * Mutable; every change happens under the daemon's lock ({@code Daemon}). The jobs change only through
 * the verbs {@link #hold}, {@link #drop} (and {@link #replay} while the journal is read): QUERY's cached
 * answer follows inside the verb. What a job's grant makes on the host (its environment file, slices, CDI
 * spec, device policy) follows through the one seam, {@code HostDevices}, whose verbs call these.
 * <p>
 * The core has two faces: {@link #cluster} answers what is where and decides whole grants (JOB_START,
 * restores, explanations); {@link #reallocs}, over the same cluster, is how a running job's holding
 * changes or ends (REALLOC, RELEASE, JOB_END: it also answers the job's waiting reallocs).
 */
public final class HostState {
    public final Config config;
    public final ComplexTable table;
    public final Limits limits;
    /** Jobs holding a grant here, in the order they were granted. */
    private final Map<JobId, Job> jobs = new LinkedHashMap<>();
    /** What the command being answered leaves for after its answer: a new job's file and log line. */
    public final AfterAnswer after;
    /** What the core covers: chosen by the daemon's role. */
    private final Scope scope;
    /**
     * Jobs whose global part was being asked of the authority when their start was forced, and whose
     * answer is not on disk: the authority says at the next connect (JournalRecord.PENDING).
     */
    private final java.util.Set<JobId> remotePending = new java.util.LinkedHashSet<>();
    /** Jobs that hold nothing here but entered (the starter enters every job). */
    public final BareJobs bare = new BareJobs();
    /** Ended jobs with processes left in their cgroup, under a closed policy until they exit ({@code Leftovers}). */
    private final Map<String, java.util.List<Long>> leftovers = new LinkedHashMap<>();
    private Cluster cluster;
    /** Every instance's health (docs/health.md): told to each new core as it is installed. */
    public final HostHealth health = new HostHealth();
    /** What the host's devices name and show (a job's environment, the GPUs, the slices): changed by {@code HostDevices}. */
    public final DeviceViews devices;
    /** Reallocation over {@link #cluster}: a new one with every new cluster ({@link #install}). */
    private rsmap.realloc.Reallocs reallocs;
    /** Whether running jobs may reallocate, and the order waiting reallocs are served (rsmapd.conf, RELOAD). */
    private boolean reallocOn;
    private rsmap.realloc.Policy reallocPolicy;
    /** The highest alloc_id the journal makes good for: answers after a restart go on above it. */
    private long lastAllocId;
    private String hostValues;
    private String globalValues;
    /** The configuration generation: 1 at the first start, one more per accepted change. */
    private long generation;
    /**
     * This host's attributes: the discovered ones with rsmapd.conf's attributes over them, read
     * with the declared types; fixed from start to stop. NONE on an authority.
     */
    private rsmap.node.NodeAttributes attributes = rsmap.node.NodeAttributes.NONE;
    /** The host's slot capacity: rsmapd.conf's slots, else the discovered cpus; empty: no slot limit. */
    private java.util.OptionalInt slots = java.util.OptionalInt.empty();
    /** This host as filters see it, made once from the two above. */
    private rsmap.node.Node node;
    /** QUERY's answers per viewer, emptied by any change (see {@code Commands#quick}). */
    private final QueryViews queryViews = new QueryViews();
    /** Whether this host's configurations list devices, remembered for them ({@link #devicesListed()}). */
    private final DevicesListed devicesListed = new DevicesListed();
    /** Requests and complex_values already parsed against this table (immutable values), by their text. */
    /** On an authority: the groups each job's scope=job requests are held to on all its hosts. */
    public final JobGroups jobGroups = new JobGroups();
    private final ParseCache parsing;

    public HostState(Config config, ComplexTable table, Scope scope, AfterAnswer after, DeviceViews devices) {
        this.config = config;
        this.table = table;
        this.after = after;
        this.scope = scope;
        this.devices = devices;
        this.limits = Limits.DEFAULT.withMaxRsmapIds(config.maxRsmapIds());
        this.parsing = new ParseCache(table, limits);
        this.reallocOn = config.realloc();
        this.reallocPolicy = rsmap.realloc.Policy.named(config.reallocPolicy()).orElseThrow();
    }

    /** This host's attributes and slots, from what {@code found} discovered and rsmapd.conf ({@link Discovery#describe}). */
    public void describe(Discovery.Result found, LogBook log) throws ParseException {
        Discovery.Described d = Discovery.describe(config, found, limits, log);
        attributes = d.attributes();
        slots = d.slots();
        node = new rsmap.node.Node(config.host(), slots, attributes);
    }

    /** This host as filters see it. */
    public rsmap.node.Node node() {
        if (node == null) {
            node = new rsmap.node.Node(config.host(), slots, attributes);
        }
        return node;
    }

    /** Reallocation over {@code next}, with this daemon's settings (its caller says where alloc ids go on). */
    public rsmap.realloc.Reallocs reallocsOver(Cluster next) {
        rsmap.realloc.Reallocs r = new rsmap.realloc.Reallocs(next);
        r.setEnabled(reallocOn);
        r.setPolicy(reallocPolicy);
        return r;
    }

    /** {@code next} (with its reallocation {@code r}) becomes the state's core. */
    public void install(Cluster next, rsmap.realloc.Reallocs r) {
        health.applyTo(next, host());
        cluster = next;
        reallocs = r;
        changed();
    }

    public String host() {
        return config.host();
    }

    // --- the core and its settings: read freely, changed by the verbs below ---

    /** The core: what is where; it decides whole grants (JOB_START, restores, explanations). */
    public Cluster cluster() {
        return cluster;
    }

    /** The same core as a running job's holding changes or ends (REALLOC, RELEASE, JOB_END). */
    public rsmap.realloc.Reallocs reallocs() {
        return reallocs;
    }

    /** The configuration generation: 1 at the first start, one more per accepted change. */
    public long generation() {
        return generation;
    }

    public String hostValues() {
        return hostValues;
    }

    public String globalValues() {
        return globalValues;
    }

    /** Generation {@code g} took effect with these complex_values (or was read back from the journal). */
    public void configured(long g, String host, String global) {
        generation = g;
        hostValues = host;
        globalValues = global;
        changed();
    }

    public boolean reallocOn() {
        return reallocOn;
    }

    public rsmap.realloc.Policy reallocPolicy() {
        return reallocPolicy;
    }

    /** RELOAD's realloc and realloc_policy, for this core and every next one. */
    public void reallocSettings(boolean on, rsmap.realloc.Policy policy) {
        reallocOn = on;
        reallocPolicy = policy;
        changed();
    }

    /** The highest alloc_id the journal makes good for: answers after a restart go on above it. */
    public long lastAllocId() {
        return lastAllocId;
    }

    /** The journal makes good for alloc ids up to {@code upTo} now. */
    public void allocIdsUpTo(long upTo) {
        lastAllocId = Math.max(lastAllocId, upTo);
    }

    public rsmap.node.NodeAttributes attributes() {
        return attributes;
    }

    public java.util.OptionalInt slots() {
        return slots;
    }

    // --- ended jobs' processes left behind, starts not confirmed ---

    /** The processes left in ended jobs' cgroups, by the name their closed policy goes on under. */
    public Map<String, java.util.List<Long>> leftovers() {
        return java.util.Collections.unmodifiableMap(new LinkedHashMap<>(leftovers));
    }

    /** {@code name}'s left processes are {@code pids} now. */
    public void leftover(String name, java.util.List<Long> pids) {
        if (!java.util.List.copyOf(pids).equals(leftovers.put(name, java.util.List.copyOf(pids)))) {
            changed();
        }
    }

    /** {@code name} has no process left (or a job of that name started again). */
    public void leftoverGone(String name) {
        if (leftovers.remove(name) != null) {
            changed();
        }
    }

    /** Job {@code id}'s global part is not on disk: the authority says at the next connect. */
    public void pending(JobId id) {
        remotePending.add(id);
    }

    public boolean isPending(JobId id) {
        return remotePending.contains(id);
    }

    /** Job {@code id}'s global part is known (or the job ended). */
    public void confirmed(JobId id) {
        remotePending.remove(id);
    }

    public java.util.Set<JobId> pendingJobs() {
        return java.util.Collections.unmodifiableSet(remotePending);
    }

    /** The state changed: what QUERY answered from the cache is stale, for every viewer. */
    public void changed() {
        queryViews.clear();
    }

    /** QUERY's whole answer as {@code user} sees it (null: root and the admin); null when stale. */
    public String cachedState(String user) {
        return queryViews.get(user);
    }

    /** Keeps QUERY's whole answer for {@code user} (null: root and the admin); under the lock, as every change. */
    public void cacheState(String user, String text) {
        queryViews.put(user, text);
    }

    /** The job {@code id} holding a grant here. */
    public Optional<Job> job(JobId id) {
        return Optional.ofNullable(jobs.get(id));
    }

    public boolean holds(JobId id) {
        return jobs.containsKey(id);
    }

    /** The ids of the jobs holding grants (a view: read it under the lock). */
    public Set<JobId> jobIds() {
        return java.util.Collections.unmodifiableSet(jobs.keySet());
    }

    /** The jobs holding grants, in the order they were granted (a view: read it under the lock). */
    public java.util.Collection<Job> jobs() {
        return java.util.Collections.unmodifiableCollection(jobs.values());
    }

    /** {@code job} holds what it says from now on (its renderings follow through {@code HostDevices#hold}). */
    public void hold(Job job) {
        jobs.put(job.id(), job);
        changed();
    }

    /** Job {@code id} holds nothing here any more (its renderings go through {@code HostDevices#ended}). */
    public void drop(JobId id) {
        if (jobs.remove(id) != null) {
            changed();
        }
    }

    /** While the journal is replayed: the job as its records say (its environment file is already there). */
    public void replay(Job job) {
        jobs.put(job.id(), job);
    }

    /** While the journal is replayed: the job ended; false when it held nothing. */
    public boolean replayEnd(JobId id) {
        devices.journaledEnd(id);
        return jobs.remove(id) != null;
    }

    /** complex_values parsed once per text: start-up checks the file's, then replays the journal's, the same. */
    public ComplexValues values(String text) throws ParseException {
        return parsing.values(text);
    }

    /** A core for this host (and the global host, where it has maps) configured with these values. */
    public Cluster build(String host, String global) throws ParseException {
        Cluster c = new Cluster(table);
        c.setExclusionRule((h, v) -> devices.exclusions(v)); // a card and its slices are one pool
        scope.configure(c, config.host(), values(host), values(global));
        return c;
    }

    /** The host a job runs on: this one, or (on an authority) the host its id names. */
    public String hostOf(JobId id) {
        return id.host().isEmpty() ? config.host() : id.host();
    }

    /**
     * {@code c} knows the host of job {@code id}: on an authority, a host's job brings its host (with no
     * maps of its own: the host's maps are its own rsmapd's), so that the core can place its global part.
     */
    public void prepare(Cluster c, JobId id) throws ParseException {
        String host = hostOf(id);
        if (!c.knows(host)) {
            c.configure(host, values("NONE"), c.now());
        }
    }

    /** A job start on this host as the core takes it. */
    public JobSpec spec(JobId id, String request, int slots) throws ParseException {
        String host = hostOf(id);
        return new JobSpec(id.toString(), split(parsed(request), false), Map.of(host, slots), host, JobSpec.UNLIMITED,
                Optional.empty(), false);
    }

    /** {@code request} read against the complex table, each text once (many jobs ask the same; a replay too). */
    private rsmap.request.RequestList parsed(String request) throws ParseException {
        return parsing.request(request);
    }

    /** The part of {@code request} this daemon decides (global false) or its authority does (true). */
    public rsmap.request.RequestList split(rsmap.request.RequestList request, boolean global) {
        return scope.part(request, mapNames(), global);
    }

    /** The global part of {@code request} as text (empty when none), for the authority. */
    public String globalPart(String request) throws ParseException {
        return split(parsed(request), true).toString();
    }

    /** The names of this host's maps, in configured order. */
    public Set<String> mapNames() {
        return cluster.mapNames(config.host());
    }

    /**
     * Whether any instance of this host or the global host lists devices: then every job's policy is closed.
     * Looked through again only when the configurations changed ({@link DevicesListed}).
     */
    public boolean devicesListed() {
        return devicesListed.in(cluster.hosts().values());
    }
}
