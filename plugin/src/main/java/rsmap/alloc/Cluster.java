// The allocation core: the operations that decide grants on hosts and running jobs (their state and its reads
// are ClusterState's); the queue, the advance reservations and the demand of a job are rooms of their own. No I/O.
package rsmap.alloc;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;

/**
 * The state of a set of hosts (Grid Engine's RSMAP manual, "REQUESTING A RESOURCE MAP", "Inside an advance
 * reservation", "WHAT A JOB SEES"). Operations check everything before they change anything, so a
 * refusal leaves the state as it was. Not thread-safe: callers serialise operations. The reads of the
 * state ({@link #grantOf}, {@link #fits}, ...) are declared in {@link ClusterState}.
 */
public final class Cluster extends ClusterState {
    /** The global host: its maps belong to the job as a whole and are seen on every host. */
    public static final String GLOBAL = "global";
    public static final int DEFAULT_MAX_RESERVATIONS = 64;

    public Cluster(ComplexTable table) {
        super(table);
    }

    /** A deep copy of {@code o}: the same configuration, an independent state. */
    private Cluster(Cluster o) {
        super(o);
    }

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

    /**
     * Why the requests could or could not be served on {@code host} right now (for one slot), instance
     * by instance: the answer admins wish {@code qstat -j} gave.
     */
    public Explanation explain(RequestList request, String host) {
        return Explanation.of(this, request.resourceRequests(), host);
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

    /** A deep copy: the same configuration, an independent state. */
    public Cluster copy() {
        return new Cluster(this);
    }

    /** Starts {@code job} now on {@code picks}; its grant, made once. */
    Grant commit(JobSpec job, Map<Pool, int[]> picks) {
        Running r = Running.start(job, now, picks);
        running.put(job.id(), r);
        slots.run(job, now);
        queue.started(job.id());
        return r.grant();
    }

    // --- the checks: each says why not, or nothing ---

    private Optional<String> lateness(long time) {
        return time < now ? Optional.of("time " + time + " is before the current time " + now) : Optional.empty();
    }
}
