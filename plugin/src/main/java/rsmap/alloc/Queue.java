// The waiting jobs in FIFO order and the pass that retries them: backfill, reserved starts, the pass memo.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;

/**
 * The queue of one {@link Cluster} (Grid Engine's RSMAP manual, resource reservation). Invariant: a job is in
 * {@code plannedStart} only while it waits, and then holds JOB {@link Hold}s over its planned run.
 */
final class Queue {
    private final Cluster cluster;
    private final LinkedHashMap<String, JobSpec> waiting = new LinkedHashMap<>();
    private final Map<String, Long> plannedStart = new LinkedHashMap<>();
    /**
     * At most this many waiting jobs hold a reserved start at once, earliest in the queue first (like
     * max_reservation of Grid Engine's scheduler configuration); planning is the costly part of a pass.
     */
    private int maxReservations = Cluster.DEFAULT_MAX_RESERVATIONS;
    private long lastPass = Long.MIN_VALUE;
    /** Each waiting job's place in the one order of waiters ({@link ServingOrder}); taken from {@code nextPlace}. */
    private final Map<String, Long> places = new java.util.HashMap<>();
    private long nextPlace;
    /** How many jobs passes have started since the queue was made: tells answers of claims where they fall. */
    private long starts;
    /** The waiting reallocs, when something registered them: they join every pass. */
    private Claims claims;
    /** The demands of waiting and running jobs; pools change only on configure, which forgets them. */
    private final Map<JobSpec, Demands> demands = new IdentityHashMap<>();
    /** The waiting jobs that choose how to run, by id; their queue entry is a stand-in. */
    private final Map<String, Chooser> choosers = new java.util.HashMap<>();

    Queue(Cluster cluster) {
        this.cluster = cluster;
    }

    /** The waiting jobs and planned starts, for {@code to}; the limit and the last pass start afresh. */
    Queue copy(Cluster to) {
        Queue q = new Queue(to);
        q.waiting.putAll(waiting);
        q.plannedStart.putAll(plannedStart);
        q.places.putAll(places);
        q.choosers.putAll(choosers);
        q.nextPlace = nextPlace;
        return q;
    }

    /** A new place at the end of the one order of waiters. */
    long nextPlace() {
        return nextPlace++;
    }

    long starts() {
        return starts;
    }

    void setClaims(Claims c) {
        claims = c;
    }

    private List<Claims.Claim> claims() {
        return claims == null ? List.of() : claims.inServingOrder();
    }

    void setMaxReservations(int max) {
        maxReservations = max;
    }

    boolean contains(String job) {
        return waiting.containsKey(job);
    }

    List<String> jobs() {
        return new ArrayList<>(waiting.keySet());
    }

    OptionalLong plannedStart(String job) {
        Long t = plannedStart.get(job);
        return t == null ? OptionalLong.empty() : OptionalLong.of(t);
    }

    /** Queues {@code job} at the end, planning its start if it asked for resource reservation and there is room. */
    OptionalLong add(JobSpec job) {
        waiting.put(job.id(), job);
        places.put(job.id(), nextPlace());
        return job.reserve() && plannedStart.size() < maxReservations ? plan(job) : OptionalLong.empty();
    }

    /**
     * Queues a choosing job at the end, with a stand-in spec (no host, no request) that only keeps its
     * place; planning its start if it asked for resource reservation and there is room.
     */
    OptionalLong add(String id, Chooser chooser, long runtime, boolean reserve) {
        JobSpec standIn = new JobSpec(id, new rsmap.request.RequestList(List.of()), Map.of("", 1), "", runtime,
                Optional.empty(), reserve);
        waiting.put(id, standIn);
        places.put(id, nextPlace());
        choosers.put(id, chooser);
        return reserve && plannedStart.size() < maxReservations ? plan(id, chooser) : OptionalLong.empty();
    }

    /** Withdraws a waiting job. */
    JobSpec remove(String job) {
        choosers.remove(job);
        places.remove(job);
        return waiting.remove(job);
    }

    /** A job started: it no longer has a planned start. */
    void started(String job) {
        plannedStart.remove(job);
        places.remove(job);
        choosers.remove(job);
    }

    /**
     * Why {@code job} cannot be admitted at {@code time} (to start or to wait), if it cannot; its demands
     * are kept when it can.
     */
    Optional<String> admit(JobSpec job, long time) {
        Optional<String> error = taken(job);
        if (error.isPresent()) {
            return error;
        }
        if (!job.hosts().containsKey(job.master())) {
            return Optional.of("master host " + job.master() + " is not among the job's hosts");
        }
        Optional<String> slots = cluster.slots().refusal(job);
        if (slots.isPresent()) {
            return slots;
        }
        Demands d = cluster.configured().demandsOf(job);
        if (d.each().isEmpty()) {
            return d.refusal();
        }
        demands.put(job, d);
        return cluster.reservations().refusalOf(job, time, d.each().get());
    }

    /** Why {@code job}'s id cannot be used: a job running or waiting has it. */
    Optional<String> taken(JobSpec job) {
        return cluster.running().containsKey(job.id()) || contains(job.id()) ? Optional.of("job " + job.id() + " exists")
                : Optional.empty();
    }

    void forget(JobSpec job) {
        demands.remove(job);
    }

    void forgetDemands() {
        demands.clear();
    }

    /** The demands of an admitted job, once per job and configuration; empty if a reconfiguration took a map away. */
    Optional<Demands.Each> demandOf(JobSpec job) {
        return demands.computeIfAbsent(job, cluster.configured()::demandsOf).each();
    }

    /**
     * The instances for every request of {@code job} at time {@code at} (now, or a planned start), if it
     * fits. When planning, instances of running jobs whose run time ends by {@code at} count as free.
     */
    Optional<Map<Pool, int[]>> place(JobSpec job, long at, boolean planning) {
        Optional<Demands.Each> d = demandOf(job);
        if (d.isEmpty() || (!planning && !d.get().enoughFree())) {
            return Optional.empty(); // the cheap test first: most waiting jobs fail it on most passes
        }
        long to = job.endAt(at);
        long now = cluster.now();
        if (!cluster.slots().fits(job, at, to, planning, now)) {
            return Optional.empty();
        }
        return d.get().place(p -> p.availableTo(job, at, to, planning, now));
    }

    /**
     * As {@link #place}, for a job that is not admitted (a choosing job's way, a question): its demands
     * are computed for this call only, never kept.
     */
    Optional<Map<Pool, int[]>> placeOnce(JobSpec job, long at, boolean planning) {
        long to = job.endAt(at);
        long now = cluster.now();
        if (!job.hosts().containsKey(job.master()) || !cluster.slots().fits(job, at, to, planning, now)) {
            return Optional.empty();
        }
        Optional<Demands.Each> d = cluster.configured().demandsOf(job).each();
        if (d.isEmpty() || (!planning && !d.get().enoughFree())) {
            return Optional.empty();
        }
        return d.get().place(p -> p.availableTo(job, at, to, planning, now));
    }

    /** A pass is due when a reservation started or ended since the last one. */
    List<Decision.Started> passIfDue() {
        if (waiting.isEmpty() && claims().isEmpty() || !cluster.reservations().boundaryIn(lastPass, cluster.now())) {
            return List.of();
        }
        return pass();
    }

    /**
     * Retries the queue in order: a waiting job starts if it fits without touching an instance reserved
     * for a job ahead of it; one that does not fit and asked for resource reservation has its start
     * planned and its instances held, so the jobs behind it can only backfill around it. Waiting reallocs
     * take their turns in the same pass, in the one order {@link ServingOrder} decides.
     */
    List<Decision.Started> pass() {
        long now = cluster.now();
        lastPass = now;
        for (Host h : cluster.configured().withMaps()) { // a host without maps holds nothing
            for (Pool p : h.pools().values()) {
                p.holds.removeIf(x -> x.kind() == Hold.Kind.JOB || x.end() <= now);
            }
        }
        plannedStart.clear();
        cluster.slots().clearPlans();
        List<Decision.Started> started = new ArrayList<>();
        int planned = 0;
        // Within one pass availability only shrinks (jobs start, instances get held), so a job that looks
        // exactly like one that already failed fails too: the queue of a busy cluster is mostly repeats.
        Set<List<Object>> failed = new HashSet<>();
        for (ServingOrder.Turn turn : ServingOrder.of(new ArrayList<>(waiting.values()), places, claims())) {
            if (turn.claim() != null) {
                turn.claim().tryNow();
                continue;
            }
            JobSpec job = turn.job();
            Chooser chooser = choosers.get(job.id());
            if (chooser != null) {
                planned += choose(job, chooser, started, planned < maxReservations);
                continue;
            }
            Optional<Map<Pool, int[]>> picks = Optional.empty();
            if (cluster.reservations().admits(job, now) && demandOf(job).map(Demands.Each::enoughFree).orElse(false)) {
                List<Object> shape = shape(job);
                picks = failed.contains(shape) ? Optional.empty() : place(job, now, false);
                if (picks.isEmpty()) {
                    failed.add(shape);
                }
            }
            if (picks.isPresent()) {
                remove(job.id());
                Grant grant = cluster.commit(job, picks.get());
                started.add(new Decision.Started(job.id(), grant));
                starts++;
            } else if (job.reserve() && planned < maxReservations) {
                planned += plan(job).isPresent() ? 1 : 0;
            }
        }
        return started;
    }

    /** A choosing job's turn in a pass: it starts as it chooses, or has its start planned; 1 if planned. */
    private int choose(JobSpec standIn, Chooser chooser, List<Decision.Started> started, boolean mayPlan) {
        long now = cluster.now();
        Optional<JobSpec> job = chooser.now(cluster);
        Optional<Map<Pool, int[]>> picks = job.flatMap(j -> placeOnce(j, now, false));
        if (picks.isPresent()) {
            remove(standIn.id());
            Grant grant = cluster.commit(job.get(), picks.get());
            started.add(new Decision.Started(standIn.id(), grant));
            starts++;
            return 0;
        }
        return standIn.reserve() && mayPlan && plan(standIn.id(), chooser).isPresent() ? 1 : 0;
    }

    /** A choosing job's reserved start: the way it plans earliest, its instances and slots held for it. */
    private OptionalLong plan(String id, Chooser chooser) {
        Optional<Chooser.Planned> p = chooser.plan(cluster);
        Optional<Map<Pool, int[]>> picks = p.flatMap(x -> placeOnce(x.job(), x.start(), x.start() > cluster.now()));
        if (picks.isEmpty()) {
            plannedStart.remove(id);
            return OptionalLong.empty();
        }
        hold(p.get().job(), p.get().start(), picks.get());
        return OptionalLong.of(p.get().start());
    }

    /** Holds {@code picks} and the job's slots over its run from {@code t}: its reserved start. */
    private void hold(JobSpec job, long t, Map<Pool, int[]> picks) {
        long end = job.endAt(t);
        picks.forEach((pool, idx) -> pool.holds.add(new Hold(Hold.Kind.JOB, job.id(), t, end, idx)));
        cluster.slots().plan(job, t);
        plannedStart.put(job.id(), t);
    }

    /**
     * What decides whether a job can start now: its requests, hosts, master and reservation, and which
     * holds its run time meets.
     */
    private List<Object> shape(JobSpec job) {
        long now = cluster.now();
        long end = job.endAt(now);
        List<Hold> overlapped = new ArrayList<>();
        for (Demand d : demandOf(job).map(Demands.Each::list).orElse(List.of())) {
            for (Pool p : d.perPool().keySet()) {
                for (Hold h : p.holds) {
                    if (h.overlaps(now, end)) {
                        overlapped.add(h);
                    }
                }
            }
        }
        // Jobs alike but for run time are alike when their windows meet the very same holds.
        return List.of(job.request(), job.hosts(), job.master(), job.ar().orElse(""), overlapped);
    }

    /**
     * Grid Engine's RSMAP manual, resource reservation: the earliest time at which the whole request - one group, not
     * merely the amount - is free, given when running jobs end; its instances are then held for it.
     */
    private OptionalLong plan(JobSpec job) {
        long now = cluster.now();
        // Candidate starts: now, and every time something held in one of the job's pools is freed.
        Set<Pool> mine = demandOf(job).map(Demands.Each::pools).orElse(Set.of());
        TreeSet<Long> times = new TreeSet<>();
        times.add(now);
        for (Pool p : mine) {
            p.changesAfter(now, times);
        }
        cluster.slots().changesAfter(job.hosts().keySet(), now, times);
        cluster.reservations().startsAfter(now, times);
        ReservationSpec ar = job.ar().flatMap(cluster.reservations()::get).orElse(null);
        for (long t : times) {
            if (ar != null && (t < ar.start() || t >= ar.end())) {
                continue;
            }
            Optional<Map<Pool, int[]>> picks = place(job, t, true);
            if (picks.isPresent()) {
                hold(job, t, picks.get());
                return OptionalLong.of(t);
            }
        }
        plannedStart.remove(job.id());
        return OptionalLong.empty();
    }

    /** The queue part of {@link Cluster#dump()}. */
    void dump(StringBuilder b) {
        waiting.keySet().forEach(j -> b.append("wait ").append(j).append('\n'));
        b.append("planned ").append(plannedStart);
    }
}
