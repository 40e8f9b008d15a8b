// The allocation core: hosts and their resource maps, running jobs, and the operations that decide
// grants; the queue, the advance reservations and the demand of a job are rooms of their own. No I/O.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;

/**
 * The state of a set of hosts (Grid Engine's RSMAP manual, "REQUESTING A RESOURCE MAP", "Inside an advance
 * reservation", "WHAT A JOB SEES"). Operations check everything before they change anything, so a
 * refusal leaves the state as it was. Not thread-safe: callers serialise operations.
 */
public final class Cluster {
    /** The global host: its maps belong to the job as a whole and are seen on every host. */
    public static final String GLOBAL = "global";
    public static final int DEFAULT_MAX_RESERVATIONS = 64;

    private final ComplexTable table;
    private final Hosts hosts;
    /** Invariant: exactly the instances of {@code picks} are held by the job, in their pools. */
    private final Map<String, Running> running = new LinkedHashMap<>();
    private final Queue queue;
    private final Reservations reservations;
    /** Host slots: every running job takes its slots on each of its hosts. */
    private final Slots slots;
    /** Tainted identifiers (docs/health.md), applied again to a reconfigured host's pools. */
    private final Taints taints;
    private long now;

    public Cluster(ComplexTable table) {
        this.table = table;
        this.hosts = new Hosts();
        this.queue = new Queue(this);
        this.reservations = new Reservations();
        this.slots = new Slots();
        this.taints = new Taints();
    }

    /** A deep copy of {@code o}: the same configuration, an independent state. */
    private Cluster(Cluster o) {
        table = o.table;
        queue = o.queue.copy(this);
        reservations = o.reservations.copy();
        slots = o.slots.copy();
        taints = o.taints.copy();
        now = o.now;
        Map<Pool, Pool> mapping = Hosts.mapping();
        hosts = o.hosts.copy(mapping);
        exclusionRule = o.exclusionRule;
        o.running.forEach((id, r) -> running.put(id, r.on(mapping)));
    }

    /** How each configured host's exclusions follow from its complex_values ({@link Exclusions}). */
    private Exclusions.Rule exclusionRule = Exclusions.Rule.NONE;

    /** Sets the rule for the exclusions of hosts configured from now on. */
    public void setExclusionRule(Exclusions.Rule rule) {
        exclusionRule = java.util.Objects.requireNonNull(rule, "rule");
    }

    /**
     * Asks the rule again for {@code host} as configured (what is blocked changed: an admin's slice, a taint);
     * held instances stay held.
     */
    public void reapplyExclusions(String host) {
        hosts.get(host).ifPresent(h -> {
            Exclusions x = exclusionRule.of(host, h.values());
            h.pools().values().forEach(p -> p.exclusions = x);
        });
    }

    /** Sets how many waiting jobs may hold a reserved start at once (0 turns resource reservation off). */
    public void setMaxReservations(int max) {
        if (max < 0) {
            throw new IllegalArgumentException("max reservations must be 0 or more");
        }
        queue.setMaxReservations(max);
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

    /**
     * Configures (or reconfigures) a host. Refused while any instance of the host is held or reserved.
     * New capacity may let waiting jobs start.
     */
    public Decision configure(String host, ComplexValues values, long time) {
        Optional<String> late = lateness(time);
        if (late.isPresent()) {
            return Decision.refused(late.get());
        }
        if (hosts.get(host).filter(old -> !old.idleAt(time)).isPresent()) { // ended reservations are gone
            return Decision.refused("host " + host + " has running jobs or reservations; it can be changed when they"
                    + " are gone");
        }
        now = time;
        Host h = Host.of(host, values);
        Exclusions x = exclusionRule.of(host, values);
        h.pools().values().forEach(p -> p.exclusions = x);
        taints.applyTo(h);
        hosts.put(h);
        queue.forgetDemands();
        return Decision.ok(queue.pass());
    }

    /** Grid Engine's RSMAP manual: a job is granted now, waits (with a reserved start under -R y), or is refused. */
    public Decision submit(JobSpec job, long time) {
        return start(job, time, true);
    }

    /**
     * A job that runs now or not at all (execd has started it already): GRANTED, REFUSED, or NOT_NOW with
     * why ({@code map: verdict} for each map that cannot start on a host of the job, joined by "; ").
     * Never queues the job; NOT_NOW changes nothing but the time, as {@link #advance} would.
     */
    public Decision grantNow(JobSpec job, long time) {
        return start(job, time, false);
    }

    private Decision start(JobSpec job, long time, boolean mayWait) {
        Optional<String> error = lateness(time).or(() -> queue.admit(job, time));
        if (error.isPresent()) {
            queue.forget(job);
            return Decision.refused(error.get());
        }
        now = time;
        List<Decision.Started> before = queue.passIfDue();
        Optional<Map<Pool, int[]>> picks = reservations.admits(job, now) ? queue.place(job, now, false)
                : Optional.empty();
        if (picks.isPresent()) {
            return Decision.granted(commit(job, picks.get())).after(before);
        }
        if (mayWait) {
            return Decision.waiting(queue.add(job)).after(before);
        }
        queue.forget(job);
        return Decision.notNow(Explanation.whyNot(this, job)).after(before);
    }

    /**
     * Puts a job back with exactly the instances it was granted before (a daemon's journal replay, or a
     * reconfiguration that must keep every running job's grant): no choice is made again, so grants
     * survive whatever ran and ended in between. Refused, with nothing changed, when an instance of the
     * grant is no longer configured or is held by another job.
     */
    public Decision restore(JobSpec job, Grant grant, long time) {
        Map<Pool, int[]> picks = new LinkedHashMap<>();
        Optional<String> error = lateness(time).or(() -> queue.taken(job))
                .or(() -> grant.resolve(job.id(), hosts::pool, picks));
        if (error.isPresent()) {
            return Decision.refused(error.get());
        }
        now = time;
        return Decision.granted(commit(job, picks));
    }

    /** Ends a running job (or withdraws a waiting one) and retries the queue in order. */
    public Decision finish(String job, long time) {
        Optional<String> late = lateness(time);
        if (late.isPresent()) {
            return Decision.refused(late.get());
        }
        Running r = running.get(job);
        if (r == null && !queue.contains(job)) {
            return Decision.refused("unknown job " + job);
        }
        now = time;
        if (r != null) {
            r.end();
            slots.end(r.spec());
            running.remove(job);
            queue.forget(r.spec());
        } else {
            queue.forget(queue.remove(job));
        }
        return Decision.ok(queue.pass());
    }

    /** Holds particular instances over {@code [start, end)} for an advance reservation. */
    public Decision reserve(ReservationSpec ar, long time) {
        Optional<String> error = lateness(time).or(() -> reservations.refusal(ar, time));
        if (error.isPresent()) {
            return Decision.refused(error.get());
        }
        Demands d = hosts.demandsOf(Reservations.asJob(ar));
        Optional<Map<Pool, int[]>> picks = d.each().flatMap(each -> Reservations.place(ar, each));
        if (picks.isEmpty()) {
            return Decision.refused(d.refusal().orElse("advance reservation " + ar.id() + " cannot be met over ["
                    + ar.start() + ", " + ar.end() + "): the instances are held or reserved"));
        }
        now = time;
        reservations.add(ar, picks.get());
        return Decision.granted(Grant.of(picks.get())).after(queue.pass());
    }

    /** Lets time pass: where a reservation starts or ends on the way, the queue is retried. */
    public Decision advance(long time) {
        Optional<String> late = lateness(time);
        if (late.isPresent()) {
            return Decision.refused(late.get());
        }
        now = time;
        return Decision.ok(queue.passIfDue());
    }

    /** What a running job sees on {@code host}: its grant's {@link Grant#environment(String)}. */
    public Optional<Map<String, String>> environment(String job, String host) {
        Running r = running.get(job);
        if (r == null || !r.spec().hosts().containsKey(host)) {
            return Optional.empty();
        }
        return Optional.of(r.grant().environment(host));
    }

    /**
     * Why the requests could or could not be served on {@code host} right now (for one slot), instance
     * by instance: the answer admins wish {@code qstat -j} gave.
     */
    public Explanation explain(RequestList request, String host) {
        return Explanation.of(this, request.resourceRequests(), host);
    }

    /** The instances of each map on {@code host}: identifier and the job holding it ("" when free). */
    public Map<String, List<Map.Entry<String, String>>> instances(String host) {
        return hosts.get(host).map(Host::instances).orElseGet(LinkedHashMap::new);
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

    // --- node filters and alternatives: host slots and choosing jobs ---

    /**
     * Sets a host's slot capacity (empty: no slot limit). Running jobs keep their slots even beyond a
     * lowered capacity; a raised one may let waiting jobs start.
     */
    public Decision setSlots(String host, OptionalInt capacity, long time) {
        Optional<String> late = lateness(time);
        if (late.isPresent()) {
            return Decision.refused(late.get());
        }
        if (capacity.isPresent() && capacity.getAsInt() < 0) {
            return Decision.refused("host " + host + ": slots must be 0 or more");
        }
        now = time;
        if (slots.capacity(host).equals(capacity)) {
            return Decision.ok(queue.passIfDue());
        }
        slots.setCapacity(host, capacity);
        return Decision.ok(queue.pass());
    }

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
     * Submits a job that chooses how to run: it starts now as {@code chooser} decides, or
     * waits, and is asked again at every queue pass; with {@code reserve} its earliest way is planned.
     */
    public Decision submit(String id, Chooser chooser, long runtime, boolean reserve, long time) {
        Optional<String> late = lateness(time);
        if (late.isPresent()) {
            return Decision.refused(late.get());
        }
        if (running.containsKey(id) || queue.contains(id)) {
            return Decision.refused("job " + id + " exists");
        }
        now = time;
        List<Decision.Started> before = queue.passIfDue();
        Optional<JobSpec> job = chooser.now(this);
        Optional<Map<Pool, int[]>> picks = job.flatMap(j -> queue.placeOnce(j, now, false));
        if (picks.isPresent()) {
            return Decision.granted(commit(job.get(), picks.get())).after(before);
        }
        return Decision.waiting(queue.add(id, chooser, runtime, reserve)).after(before);
    }

    /**
     * Taints ({@code why} not null: "nvml: Xid 79 at 12:03:05", what explanations show) or clears every share
     * of identifier {@code id} of {@code map} on {@code host} (docs/health.md): a tainted one is offered to no
     * placement; a job holding it keeps it; clearing lets waiting jobs start. Refused, changing nothing, for
     * an identifier the host does not have.
     */
    public Decision taint(String host, String map, String id, String why, long time) {
        Optional<String> error = lateness(time).or(() -> Taints.unknown(hosts, host, map, id));
        if (error.isPresent()) {
            return Decision.refused(error.get());
        }
        now = time;
        taints.set(hosts.pool(host, map).orElseThrow(), host, id, why);
        return Decision.ok(why == null ? queue.pass() : List.of());
    }

    /** {@link #taint} with no why: the taint is cleared. */
    public Decision untaint(String host, String map, String id, long time) {
        return taint(host, map, id, null, time);
    }

    /** The tainted identifiers of {@code map} on {@code host}, and why. */
    public Map<String, String> taints(String host, String map) {
        return taints.of(host, map);
    }

    /** The job as it runs: its hosts and slots, requests and timing. */
    public Optional<JobSpec> specOf(String job) {
        return Optional.ofNullable(running.get(job)).map(Running::spec);
    }

    /** A deep copy: the same configuration, an independent state. */
    public Cluster copy() {
        return new Cluster(this);
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

    /** Starts {@code job} now on {@code picks}; its grant, made once. */
    Grant commit(JobSpec job, Map<Pool, int[]> picks) {
        Running r = Running.start(job, now, picks);
        running.put(job.id(), r);
        slots.run(job, now);
        queue.started(job.id());
        return r.grant();
    }

    /** A canonical dump of the whole state, for tests that check a refusal changed nothing. */
    String dump() {
        StringBuilder b = new StringBuilder("now=").append(now).append('\n');
        hosts.all().forEach(h -> h.pools().values().forEach(p -> p.dump(b)));
        running.forEach((id, r) -> b.append("run ").append(id).append('@').append(r.start()).append('\n'));
        queue.dump(b);
        return b.append(" ars ").append(reservations.ids()).append('\n').toString();
    }

    // --- the checks: each says why not, or nothing ---

    private Optional<String> lateness(long time) {
        return time < now ? Optional.of("time " + time + " is before the current time " + now) : Optional.empty();
    }
}
