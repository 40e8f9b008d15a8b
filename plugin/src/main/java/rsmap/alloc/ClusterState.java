// The state of a Cluster (hosts, running jobs, queue, reservations, slots, taints) and every read of it;
// nothing here changes it: the operations that do are Cluster's, which is this class's only subclass.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;

/**
 * What {@link Cluster} holds and what can be read of it; its public reads are part of Cluster's API. The
 * fields are package-private for Cluster's operations; other classes use the accessors at the end.
 */
abstract sealed class ClusterState permits Cluster {
    final ComplexTable table;
    final Hosts hosts;
    /** Invariant: exactly the instances of {@code picks} are held by the job, in their pools. */
    final Map<String, Running> running = new LinkedHashMap<>();
    final Queue queue;
    final Reservations reservations;
    /** Host slots: every running job takes its slots on each of its hosts. */
    final Slots slots;
    /** Tainted identifiers (docs/health.md), applied again to a reconfigured host's pools. */
    final Taints taints;
    /** How each configured host's exclusions follow from its complex_values ({@link Exclusions}). */
    Exclusions.Rule exclusionRule = Exclusions.Rule.NONE;
    long now;

    // The queue asks the Cluster itself (a Chooser is given it); sealed, so this is always one.
    ClusterState(ComplexTable table) {
        this.table = table;
        this.hosts = new Hosts();
        this.queue = new Queue((Cluster) this);
        this.reservations = new Reservations();
        this.slots = new Slots();
        this.taints = new Taints();
    }

    /** A deep copy of {@code o}: the same configuration, an independent state. */
    ClusterState(ClusterState o) {
        table = o.table;
        queue = o.queue.copy((Cluster) this);
        reservations = o.reservations.copy();
        slots = o.slots.copy();
        taints = o.taints.copy();
        now = o.now;
        Map<Pool, Pool> mapping = Hosts.mapping();
        hosts = o.hosts.copy(mapping);
        exclusionRule = o.exclusionRule;
        o.running.forEach((id, r) -> running.put(id, r.on(mapping)));
    }

    public ComplexTable table() {
        return table;
    }

    /** The current time: the latest time any operation happened at. */
    public long now() {
        return now;
    }

    /** Whether {@code host} is configured: without building {@link #hosts()} (an authority knows 10,000). */
    public boolean knows(String host) {
        return hosts.get(host).isPresent();
    }

    /** Hosts and their configuration, in the order they were configured. */
    public Map<String, ComplexValues> hosts() {
        return hosts.values();
    }

    /** What a running job sees on {@code host}: its grant's {@link Grant#environment(String)}. */
    public Optional<Map<String, String>> environment(String job, String host) {
        Running r = running.get(job);
        if (r == null || !r.spec().hosts().containsKey(host)) {
            return Optional.empty();
        }
        return Optional.of(r.grant().environment(host));
    }

    /** The instances of each map on {@code host}: identifier and the job holding it ("" when free). */
    public Map<String, List<Map.Entry<String, String>>> instances(String host) {
        return hosts.get(host).map(Host::instances).orElseGet(LinkedHashMap::new);
    }

    /**
     * The names of {@code host}'s maps, in configured order (empty for an unknown host): the keys of
     * {@link #instances(String)} without listing every instance and its holder, which a job start asks for.
     */
    public Set<String> mapNames(String host) {
        return new LinkedHashSet<>(hosts.pools(host).keySet());
    }

    /** The running jobs, in the order they started. */
    public List<String> runningJobs() {
        return new ArrayList<>(running.keySet());
    }

    /** The grant of a running job. */
    public Optional<Grant> grantOf(String job) {
        return Optional.ofNullable(running.get(job)).map(Running::grant);
    }

    /** The instances a running job holds, being given back included (its device policy reads them); empty when none. */
    public List<rsmap.map.Instance> instancesOf(String job) {
        return Optional.ofNullable(running.get(job)).map(Running::instances).orElse(List.of());
    }

    /** The groups a running job's scope=job requests hold (what its other hosts are held to); NONE if none. */
    public GroupKeys groupKeys(String job) {
        Running r = running.get(job);
        return r == null ? GroupKeys.NONE : GroupKeys.chosen(r.spec(), r.picks());
    }

    /** The job as it runs: its hosts and slots, requests and timing. */
    public Optional<JobSpec> specOf(String job) {
        return Optional.ofNullable(running.get(job)).map(Running::spec);
    }

    public boolean isRunning(String job) {
        return running.containsKey(job);
    }

    public boolean isWaiting(String job) {
        return queue.contains(job);
    }

    /** The jobs waiting, in queue order. */
    public List<String> queue() {
        return queue.jobs();
    }

    /** The start planned for a waiting job with resource reservation, from the last queue pass. */
    public OptionalLong plannedStart(String job) {
        return queue.plannedStart(job);
    }

    public Optional<ReservationSpec> reservation(String id) {
        return reservations.get(id);
    }

    // --- node filters and alternatives: host slots and what could start when ---

    /** A host's slot capacity; empty when it has no slot limit. */
    public OptionalInt slots(String host) {
        return slots.capacity(host);
    }

    /**
     * The slots of {@code host} a job starting at {@code at} (now or later) could take for its whole
     * {@code runtime}, given the running jobs and the reserved starts; Integer.MAX_VALUE without limit.
     */
    public int freeSlots(String host, long at, long runtime) {
        long to = runtime == JobSpec.UNLIMITED || at > Long.MAX_VALUE - runtime ? JobSpec.UNLIMITED : at + runtime;
        return slots.freeFor(host, "", at, to, at > now, now);
    }

    /**
     * Whether {@code job} (not submitted) could start at {@code at}: now, or later when the running jobs
     * whose run time ends by then are gone. Its hosts, slots and instances are checked; holds of
     * reservations and reserved starts are respected. Changes nothing.
     */
    public boolean fits(JobSpec job, long at) {
        return at >= now && reservations.admits(job, at) && queue.placeOnce(job, at, at > now).isPresent();
    }

    /** The times after {@code t} at which something held is freed or a hold begins or ends: when to try again. */
    public java.util.SortedSet<Long> changesAfter(long t) {
        java.util.TreeSet<Long> times = new java.util.TreeSet<>();
        hosts.all().forEach(h -> h.pools().values().forEach(p -> p.changesAfter(t, times)));
        slots.changesAfter(null, t, times);
        reservations.startsAfter(t, times);
        return times;
    }

    /**
     * The identifiers of {@code map} on {@code host} that no job holds and an exclusion keeps out of use now
     * (docs/gpus.md, "One card, one pool": a held slice blocks its card, a held card its slices), with why. A
     * tainted one is left out: its taint is what keeps it, as an explanation says.
     */
    public Map<String, Exclusions.Block> blocked(String host, String map) {
        Map<String, Exclusions.Block> out = new LinkedHashMap<>();
        Pool p = hosts.pools(host).get(map);
        if (p == null || p.exclusions.isEmpty()) {
            return out;
        }
        for (int i = 0; i < p.size(); i++) {
            String id = p.instances[i].id();
            if (p.heldBy[i] == null && p.taint[i] == null && !out.containsKey(id)) {
                Exclusions.Block b = Exclusions.block(p, i, p.siblings);
                if (b != null) {
                    out.put(id, b);
                }
            }
        }
        return out;
    }

    /** The tainted identifiers of {@code map} on {@code host}, and why. */
    public Map<String, String> taints(String host, String map) {
        return taints.of(host, map);
    }

    // --- package-private: for the queue, Explanation and the invariant checks of the tests ---

    Hosts configured() {
        return hosts;
    }

    Map<String, Running> running() {
        return running;
    }

    Reservations reservations() {
        return reservations;
    }

    Slots slots() {
        return slots;
    }

    /** The queue, for {@link Holdings}: waiting reallocs join its passes. */
    Queue waiters() {
        return queue;
    }

    /** A canonical dump of the whole state, for tests that check a refusal changed nothing. */
    String dump() {
        StringBuilder b = new StringBuilder("now=").append(now).append('\n');
        hosts.all().forEach(h -> h.pools().values().forEach(p -> p.dump(b)));
        running.forEach((id, r) -> b.append("run ").append(id).append('@').append(r.start()).append('\n'));
        queue.dump(b);
        return b.append(" ars ").append(reservations.ids()).append('\n').toString();
    }
}
