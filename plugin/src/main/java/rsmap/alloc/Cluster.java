// The allocation core: hosts and their resource maps, running and waiting jobs, reservations, and the
// operations that decide grants. No I/O; the daemon, rsmap simulate and the tests drive the same code.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeSet;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.map.ResourceMap;
import rsmap.request.ResourceRequest;

/**
 * The state of a set of hosts (seed 002, "REQUESTING A RESOURCE MAP", "Inside an advance
 * reservation", "WHAT A JOB SEES"). Operations check everything before they change anything, so a
 * refusal leaves the state as it was. Not thread-safe: callers serialise operations.
 */
public final class Cluster {
    /** The global host: its maps belong to the job as a whole and are seen on every host. */
    public static final String GLOBAL = "global";

    private final ComplexTable table;
    private final Map<String, ComplexValues> config = new LinkedHashMap<>();
    private final Map<String, Map<String, Pool>> pools = new LinkedHashMap<>();
    private final Map<String, Running> running = new LinkedHashMap<>();
    /** Waiting jobs in FIFO order, by id. */
    private final LinkedHashMap<String, JobSpec> waiting = new LinkedHashMap<>();
    private final Map<String, Long> plannedStart = new LinkedHashMap<>();
    private final Map<String, ReservationSpec> reservations = new LinkedHashMap<>();
    private long now;
    /** needs() of waiting and running jobs; pools change only on configure, which clears it. */
    private final Map<JobSpec, Map<ResourceRequest, Map<Pool, Integer>>> needsCache = new java.util.IdentityHashMap<>();
    /**
     * At most this many waiting jobs hold a reserved start at once, earliest in the queue first (like
     * max_reservation of Grid Engine's scheduler configuration); planning is the costly part of a pass.
     */
    private int maxReservations = DEFAULT_MAX_RESERVATIONS;

    public static final int DEFAULT_MAX_RESERVATIONS = 64;

    /** A running job: what it asked for, when it started, and the instances it holds per pool. */
    record Running(JobSpec spec, long start, Map<Pool, int[]> picks) {
    }

    public Cluster(ComplexTable table) {
        this.table = table;
    }

    /** Sets how many waiting jobs may hold a reserved start at once (0 turns resource reservation off). */
    public void setMaxReservations(int max) {
        if (max < 0) {
            throw new IllegalArgumentException("max reservations must be 0 or more");
        }
        this.maxReservations = max;
    }

    public ComplexTable table() {
        return table;
    }

    /** The current time: the latest time any operation happened at. */
    public long now() {
        return now;
    }

    /** Hosts and their configuration, in the order they were configured. */
    public Map<String, ComplexValues> hosts() {
        return java.util.Collections.unmodifiableMap(config);
    }

    /**
     * Configures (or reconfigures) a host. Refused while any instance of the host is held or reserved.
     * New capacity may let waiting jobs start.
     */
    public Decision configure(String host, ComplexValues values, long time) {
        String late = checkTime(time);
        if (late != null) {
            return Decision.refused(late);
        }
        Map<String, Pool> old = pools.get(host);
        if (old != null) {
            old.values().forEach(p -> p.holds.removeIf(h -> h.end() <= time)); // ended reservations are gone
        }
        if (old != null && !old.values().stream().allMatch(Pool::isIdle)) {
            return Decision.refused("host " + host + " has running jobs or reservations; it can be changed when they"
                    + " are gone");
        }
        now = time;
        Map<String, Pool> ps = new LinkedHashMap<>();
        for (ResourceMap m : values.resourceMaps()) {
            ps.put(m.name(), new Pool(host, m));
        }
        config.put(host, values);
        pools.put(host, ps);
        needsCache.clear();
        return Decision.ok(pass());
    }

    /** Seed 002: a job is granted now, waits (with a reserved start under -R y), or is refused. */
    public Decision submit(JobSpec job, long time) {
        String error = checkTime(time);
        if (error == null) {
            error = checkJob(job, time);
        }
        if (error != null) {
            needsCache.remove(job);
            return Decision.refused(error);
        }
        now = time;
        List<Decision.Started> before = passIfDue();
        Map<Pool, int[]> picks = startable(job) ? place(job, now, false) : null;
        Decision d;
        if (picks != null) {
            commit(job, picks);
            d = Decision.granted(Grant.of(picks));
        } else {
            waiting.put(job.id(), job);
            OptionalLong at = job.reserve() && plannedStart.size() < maxReservations ? plan(job) : OptionalLong.empty();
            d = Decision.waiting(at);
        }
        return before.isEmpty() ? d : new Decision(d.result(), d.grant(), d.reservedStart(), d.error(), before);
    }

    /**
     * Puts a job back with exactly the instances it was granted before (a daemon's journal replay, or a
     * reconfiguration that must keep every running job's grant): no choice is made again, so grants
     * survive whatever ran and ended in between. Refused, with nothing changed, when an instance of the
     * grant is no longer configured or is held by another job.
     */
    public Decision restore(JobSpec job, Grant grant, long time) {
        String error = checkTime(time);
        if (error == null && (running.containsKey(job.id()) || waiting.containsKey(job.id()))) {
            error = "job " + job.id() + " exists";
        }
        Map<Pool, int[]> picks = new LinkedHashMap<>();
        for (var host : grant.byHost().entrySet()) {
            for (var map : host.getValue().entrySet()) {
                if (error != null) {
                    break;
                }
                Pool p = pools.getOrDefault(host.getKey(), Map.of()).get(map.getKey());
                if (p == null) {
                    error = "host " + host.getKey() + " has no map " + map.getKey() + " any more";
                    break;
                }
                int[] idx = new int[map.getValue().size()];
                java.util.BitSet taken = new java.util.BitSet();
                for (int k = 0; k < idx.length && error == null; k++) {
                    String id = map.getValue().get(k);
                    int found = -1;
                    for (int i : p.indexesOf(id)) {
                        if (!taken.get(i) && p.heldBy[i] == null) {
                            found = i;
                            break;
                        }
                    }
                    if (found < 0) {
                        error = host.getKey() + "/" + map.getKey() + " has no free instance " + id + " for job "
                                + job.id();
                    } else {
                        taken.set(found);
                        idx[k] = found;
                    }
                }
                picks.put(p, idx);
            }
        }
        if (error != null) {
            return Decision.refused(error);
        }
        now = time;
        commit(job, picks);
        return Decision.granted(Grant.of(picks));
    }

    /** Ends a running job (or withdraws a waiting one) and retries the queue in order. */
    public Decision finish(String job, long time) {
        String late = checkTime(time);
        if (late != null) {
            return Decision.refused(late);
        }
        Running r = running.get(job);
        boolean queued = waiting.containsKey(job);
        if (r == null && !queued) {
            return Decision.refused("unknown job " + job);
        }
        now = time;
        if (r != null) {
            r.picks().forEach((pool, idx) -> pool.release(idx, job));
            running.remove(job);
            needsCache.remove(r.spec());
        } else {
            needsCache.remove(waiting.remove(job));
        }
        return Decision.ok(pass());
    }

    /** Holds particular instances over {@code [start, end)} for an advance reservation. */
    public Decision reserve(ReservationSpec ar, long time) {
        String error = checkTime(time);
        if (error == null && reservations.containsKey(ar.id()) && reservations.get(ar.id()).end() > time) {
            error = "advance reservation " + ar.id() + " exists";
        }
        if (error == null && ar.end() <= ar.start()) {
            error = "advance reservation " + ar.id() + " ends before it starts";
        }
        if (error == null && ar.end() <= time) {
            error = "advance reservation " + ar.id() + " would end before now (" + time + ")";
        }
        JobSpec asJob = null;
        if (error == null) {
            asJob = new JobSpec(ar.id(), ar.request(), ar.hosts(), ar.hosts().keySet().iterator().next(),
                    ar.end() - ar.start(), Optional.empty(), false);
            error = checkHostsAndMaps(asJob);
        }
        if (error != null) {
            needsCache.remove(asJob);
            return Decision.refused(error);
        }
        Map<Pool, int[]> picks = placeReservation(asJob, ar.start(), ar.end());
        needsCache.remove(asJob);
        if (picks == null) {
            return Decision.refused("advance reservation " + ar.id() + " cannot be met over [" + ar.start() + ", "
                    + ar.end() + "): the instances are held or reserved");
        }
        now = time;
        picks.forEach((pool, idx) -> pool.holds.add(new Hold(Hold.Kind.AR, ar.id(), ar.start(), ar.end(), idx)));
        reservations.put(ar.id(), ar);
        return new Decision(Decision.Result.GRANTED, Grant.of(picks), OptionalLong.empty(), "", pass());
    }

    /** Lets time pass: where a reservation starts or ends on the way, the queue is retried. */
    public Decision advance(long time) {
        String late = checkTime(time);
        if (late != null) {
            return Decision.refused(late);
        }
        now = time;
        return Decision.ok(passIfDue());
    }

    /**
     * Seed 002, "WHAT A JOB SEES": SGE_HGR_&lt;name&gt; per map granted on {@code host}, identifiers
     * separated by one space, one entry per instance, plus the maps of the global host.
     */
    public Optional<Map<String, String>> environment(String job, String host) {
        Running r = running.get(job);
        if (r == null || !r.spec().hosts().containsKey(host)) {
            return Optional.empty();
        }
        Map<String, String> env = new LinkedHashMap<>();
        r.picks().forEach((pool, idx) -> {
            if (pool.host.equals(host) || pool.host.equals(GLOBAL)) {
                StringBuilder b = new StringBuilder();
                for (int i : idx) {
                    b.append(b.length() > 0 ? " " : "").append(pool.instances[i].id());
                }
                env.merge("SGE_HGR_" + pool.name(), b.toString(), (x, y) -> x + " " + y);
            }
        });
        return Optional.of(env);
    }

    /**
     * Why the requests could or could not be served on {@code host} right now (for one slot), instance
     * by instance: the answer admins wish {@code qstat -j} gave.
     */
    public Explanation explain(rsmap.request.RequestList request, String host) {
        return Explanation.of(this, request.resourceRequests(), host);
    }

    /** The instances of each map on {@code host}: identifier and the job holding it ("" when free). */
    public Map<String, List<Map.Entry<String, String>>> instances(String host) {
        Map<String, List<Map.Entry<String, String>>> out = new LinkedHashMap<>();
        pools.getOrDefault(host, Map.of()).forEach((name, p) -> {
            List<Map.Entry<String, String>> list = new ArrayList<>();
            for (int i = 0; i < p.size(); i++) {
                list.add(Map.entry(p.instances[i].id(), p.heldBy[i] == null ? "" : p.heldBy[i]));
            }
            out.put(name, list);
        });
        return out;
    }

    /** The running jobs, in the order they started. */
    public List<String> runningJobs() {
        return new ArrayList<>(running.keySet());
    }

    /** The grant of a running job. */
    public Optional<Grant> grantOf(String job) {
        Running r = running.get(job);
        return r == null ? Optional.empty() : Optional.of(Grant.of(r.picks()));
    }

    public boolean isRunning(String job) {
        return running.containsKey(job);
    }

    public boolean isWaiting(String job) {
        return waiting.containsKey(job);
    }

    /** The jobs waiting, in queue order. */
    public List<String> queue() {
        return new ArrayList<>(waiting.keySet());
    }

    /** The start planned for a waiting job with resource reservation, from the last queue pass. */
    public OptionalLong plannedStart(String job) {
        Long t = plannedStart.get(job);
        return t == null ? OptionalLong.empty() : OptionalLong.of(t);
    }

    public Optional<ReservationSpec> reservation(String id) {
        return Optional.ofNullable(reservations.get(id));
    }

    /** A deep copy: the same configuration, an independent state. */
    public Cluster copy() {
        Cluster c = new Cluster(table);
        c.config.putAll(config);
        Map<Pool, Pool> mapping = new LinkedHashMap<>();
        pools.forEach((h, ps) -> {
            Map<String, Pool> cps = new LinkedHashMap<>();
            ps.forEach((n, p) -> {
                Pool cp = p.copy();
                mapping.put(p, cp);
                cps.put(n, cp);
            });
            c.pools.put(h, cps);
        });
        running.forEach((id, r) -> {
            Map<Pool, int[]> picks = new LinkedHashMap<>();
            r.picks().forEach((p, idx) -> picks.put(mapping.get(p), idx));
            c.running.put(id, new Running(r.spec(), r.start(), picks));
        });
        c.waiting.putAll(waiting);
        c.plannedStart.putAll(plannedStart);
        c.reservations.putAll(reservations);
        c.now = now;
        return c;
    }

    // --- package-private views for Explanation and the invariant checks of the tests ---

    Map<String, Map<String, Pool>> pools() {
        return pools;
    }

    Map<String, Running> running() {
        return running;
    }

    /** A canonical dump of the whole state, for tests that check a refusal changed nothing. */
    String dump() {
        StringBuilder b = new StringBuilder("now=").append(now).append('\n');
        pools.forEach((h, ps) -> ps.forEach((n, p) -> {
            b.append(h).append('/').append(n).append(' ').append(java.util.Arrays.toString(p.heldBy))
                    .append(java.util.Arrays.toString(p.heldUntil));
            for (Hold x : p.holds) {
                b.append(' ').append(x.kind()).append(':').append(x.owner()).append('[').append(x.start()).append(',')
                        .append(x.end()).append(')').append(java.util.Arrays.toString(x.indices()));
            }
            b.append('\n');
        }));
        running.forEach((id, r) -> b.append("run ").append(id).append('@').append(r.start()).append('\n'));
        waiting.keySet().forEach(j -> b.append("wait ").append(j).append('\n'));
        b.append("planned ").append(plannedStart).append(" ars ").append(reservations.keySet()).append('\n');
        return b.toString();
    }

    // --- the decisions ---

    private String checkTime(long time) {
        return time < now ? "time " + time + " is before the current time " + now : null;
    }

    private String checkJob(JobSpec job, long time) {
        if (running.containsKey(job.id()) || waiting.containsKey(job.id())) {
            return "job " + job.id() + " exists";
        }
        if (!job.hosts().containsKey(job.master())) {
            return "master host " + job.master() + " is not among the job's hosts";
        }
        String error = checkHostsAndMaps(job);
        if (error != null) {
            return error;
        }
        if (job.ar().isPresent()) {
            ReservationSpec ar = reservations.get(job.ar().get());
            if (ar == null) {
                return "unknown advance reservation " + job.ar().get();
            }
            if (ar.end() <= time) {
                return "advance reservation " + ar.id() + " has ended";
            }
            // Seed 002: "A job whose request cannot be met from the reserved instances is refused when it
            // is submitted."
            if (placeFrom(job, ar.id()) == null) {
                return "the request cannot be met from the instances of advance reservation " + ar.id();
            }
        }
        return null;
    }

    private String checkHostsAndMaps(JobSpec job) {
        for (String h : job.hosts().keySet()) {
            if (!pools.containsKey(h)) {
                return "unknown host " + h;
            }
            if (job.hosts().get(h) < 1) {
                return "host " + h + " has " + job.hosts().get(h) + " slots; a job has at least one on each host";
            }
        }
        for (ResourceRequest r : job.request().resourceRequests()) {
            Object needs = needs(r, job);
            if (needs instanceof String) {
                return (String) needs;
            }
        }
        return null;
    }

    /**
     * How many instances each pool must give for one request, or an error message. YES takes the amount
     * per slot on each host, HOST once per host, JOB once on the master host; a host without the map is
     * served by the global host's map (seed 002, "How often the amount is taken").
     */
    private Object needs(ResourceRequest r, JobSpec job) {
        Map<Pool, Integer> needs = new LinkedHashMap<>();
        for (Map.Entry<String, Integer> h : job.hosts().entrySet()) {
            long n;
            switch (r.complex().consumable()) {
                case YES:
                    n = (long) r.amount() * h.getValue();
                    break;
                case HOST:
                    n = r.amount();
                    break;
                case JOB:
                    n = h.getKey().equals(job.master()) ? r.amount() : 0;
                    break;
                default:
                    throw new AssertionError("a resource map is always consumable");
            }
            if (n == 0) {
                continue;
            }
            Pool pool = pools.getOrDefault(h.getKey(), Map.of()).get(r.name());
            if (pool == null) {
                pool = pools.getOrDefault(GLOBAL, Map.of()).get(r.name());
            }
            if (pool == null) {
                return "host " + h.getKey() + " has no resource map " + r.name() + ", and neither has the global host";
            }
            long total = needs.getOrDefault(pool, 0) + n;
            if (total > Integer.MAX_VALUE) {
                return "request " + r + " asks for more instances than can exist";
            }
            needs.put(pool, (int) total);
        }
        return needs;
    }

    /** The needs of a checked job's request, computed once per job and configuration. */
    @SuppressWarnings("unchecked")
    private Map<Pool, Integer> needsOf(ResourceRequest r, JobSpec job) {
        Map<ResourceRequest, Map<Pool, Integer>> byRequest = needsCache.computeIfAbsent(job, j -> new LinkedHashMap<>());
        Map<Pool, Integer> n = byRequest.get(r);
        if (n == null) {
            n = (Map<Pool, Integer>) needs(r, job);
            byRequest.put(r, n);
        }
        return n;
    }

    private boolean startable(JobSpec job) {
        if (job.ar().isPresent()) {
            ReservationSpec ar = reservations.get(job.ar().get());
            return ar != null && ar.start() <= now && now < ar.end();
        }
        return true;
    }

    /**
     * The instances for every request of {@code job} at time {@code at} (now, or a planned start), or
     * null. When planning, instances of running jobs whose run time ends by {@code at} count as free.
     */
    private Map<Pool, int[]> place(JobSpec job, long at, boolean planning) {
        if (!planning && !enoughFree(job)) {
            return null; // the cheap test first: most waiting jobs fail it on most passes
        }
        long to = job.endAt(at);
        return placeAll(job, p -> available(p, job, at, to, planning));
    }

    /**
     * What decides whether a job can start now: its requests, hosts, master and reservation, and which
     * holds its run time meets.
     */
    private List<Object> shape(JobSpec job) {
        long end = job.endAt(now);
        List<Hold> overlapped = new ArrayList<>();
        for (ResourceRequest r : job.request().resourceRequests()) {
            for (Pool p : needsOf(r, job).keySet()) {
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

    /** Whether every pool has at least as many unheld instances as the job needs from it. */
    private boolean enoughFree(JobSpec job) {
        for (ResourceRequest r : job.request().resourceRequests()) {
            for (Map.Entry<Pool, Integer> e : needsOf(r, job).entrySet()) {
                if (e.getKey().free() < e.getValue()) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Whether the job could be met from its reservation's instances alone, whoever uses them now. */
    private Map<Pool, int[]> placeFrom(JobSpec job, String ar) {
        return placeAll(job, p -> {
            boolean[] a = new boolean[p.size()];
            Hold h = p.holdOf(ar, Hold.Kind.AR);
            if (h != null) {
                for (int i : h.indices()) {
                    a[i] = true;
                }
            }
            return a;
        });
    }

    /** Instances an advance reservation may hold: not used by a job running into it, not reserved. */
    private Map<Pool, int[]> placeReservation(JobSpec ar, long start, long end) {
        return placeAll(ar, p -> {
            boolean[] a = new boolean[p.size()];
            for (int i = 0; i < a.length; i++) {
                a[i] = p.heldBy[i] == null || p.heldUntil[i] <= start;
            }
            for (Hold h : p.holds) {
                if (h.kind() == Hold.Kind.AR && h.overlaps(start, end)) {
                    for (int i : h.indices()) {
                        a[i] = false;
                    }
                }
            }
            return a;
        });
    }

    /** Places every resource map request of {@code job}, each pool offering what {@code available} says; null if any fails. */
    private Map<Pool, int[]> placeAll(JobSpec job, java.util.function.Function<Pool, boolean[]> available) {
        Map<Pool, int[]> all = new LinkedHashMap<>();
        for (ResourceRequest r : job.request().resourceRequests()) {
            Map<Pool, Integer> needs = needsOf(r, job);
            Map<Pool, boolean[]> offered = new LinkedHashMap<>();
            for (Pool p : needs.keySet()) {
                offered.put(p, available.apply(p));
            }
            Map<Pool, int[]> picks = Placement.place(r, needs, offered);
            if (picks == null) {
                return null;
            }
            all.putAll(picks);
        }
        return all;
    }

    /**
     * Which instances of {@code p} the job may take over {@code [from, to)}. Seed 002: "A job running
     * inside a reservation is granted from that set, and a job running outside one is not granted an
     * instance a reservation holds for the time it runs." The reserved starts of other waiting jobs are
     * respected the same way, so backfilling never delays them.
     */
    private boolean[] available(Pool p, JobSpec job, long from, long to, boolean planning) {
        boolean[] a = new boolean[p.size()];
        String ar = job.ar().orElse(null);
        if (ar != null) {
            Hold own = p.holdOf(ar, Hold.Kind.AR);
            if (own != null) {
                for (int i : own.indices()) {
                    a[i] = true;
                }
            }
        } else {
            java.util.Arrays.fill(a, true);
        }
        for (int i = 0; i < a.length; i++) {
            // When planning, a holder's instances are free from the end of its run time on - unless it is
            // already overdue (ran past time + runtime without finishing): then nobody knows when.
            if (p.heldBy[i] != null && (!planning || p.heldUntil[i] > from || p.heldUntil[i] <= now)) {
                a[i] = false;
            }
        }
        for (Hold h : p.holds) {
            boolean foreign = h.kind() == Hold.Kind.AR ? !h.owner().equals(ar) : !h.owner().equals(job.id());
            if (foreign && h.overlaps(from, to)) {
                for (int i : h.indices()) {
                    a[i] = false;
                }
            }
        }
        return a;
    }

    private void commit(JobSpec job, Map<Pool, int[]> picks) {
        long until = job.endAt(now);
        picks.forEach((pool, idx) -> pool.take(idx, job.id(), until));
        running.put(job.id(), new Running(job, now, picks));
        plannedStart.remove(job.id());
    }

    /**
     * Seed 002, resource reservation: the earliest time at which the whole request - one group, not
     * merely the amount - is free, given when running jobs end; its instances are then held for it.
     */
    private OptionalLong plan(JobSpec job) {
        // Candidate starts: now, and every time something held in one of the job's pools is freed.
        java.util.Set<Pool> mine = new java.util.LinkedHashSet<>();
        for (ResourceRequest r : job.request().resourceRequests()) {
            mine.addAll(needsOf(r, job).keySet());
        }
        TreeSet<Long> times = new TreeSet<>();
        times.add(now);
        for (Pool p : mine) {
            for (int i = 0; i < p.size(); i++) {
                if (p.heldBy[i] != null && p.heldUntil[i] > now && p.heldUntil[i] != JobSpec.UNLIMITED) {
                    times.add(p.heldUntil[i]);
                }
            }
            for (Hold h : p.holds) {
                for (long t : new long[] {h.start(), h.end()}) {
                    if (t > now && t != JobSpec.UNLIMITED) {
                        times.add(t);
                    }
                }
            }
        }
        for (ReservationSpec ar : reservations.values()) {
            if (ar.start() > now) {
                times.add(ar.start());
            }
        }
        ReservationSpec ar = job.ar().map(reservations::get).orElse(null);
        for (long t : times) {
            if (ar != null && (t < ar.start() || t >= ar.end())) {
                continue;
            }
            Map<Pool, int[]> picks = place(job, t, true);
            if (picks != null) {
                long end = job.endAt(t);
                picks.forEach((pool, idx) -> pool.holds.add(new Hold(Hold.Kind.JOB, job.id(), t, end, idx)));
                plannedStart.put(job.id(), t);
                return OptionalLong.of(t);
            }
        }
        plannedStart.remove(job.id());
        return OptionalLong.empty();
    }

    private long lastPass = Long.MIN_VALUE;

    /** A pass is due when a reservation started or ended since the last one. */
    private List<Decision.Started> passIfDue() {
        if (waiting.isEmpty()) {
            return List.of();
        }
        for (ReservationSpec ar : reservations.values()) {
            if ((ar.start() > lastPass && ar.start() <= now) || (ar.end() > lastPass && ar.end() <= now)) {
                return pass();
            }
        }
        return List.of();
    }

    /**
     * Retries the queue in order: a waiting job starts if it fits without touching an instance reserved
     * for a job ahead of it; one that does not fit and asked for resource reservation has its start
     * planned and its instances held, so the jobs behind it can only backfill around it.
     */
    private List<Decision.Started> pass() {
        lastPass = now;
        for (Map<String, Pool> ps : pools.values()) {
            for (Pool p : ps.values()) {
                p.holds.removeIf(h -> h.kind() == Hold.Kind.JOB || h.end() <= now);
            }
        }
        plannedStart.clear();
        List<Decision.Started> started = new ArrayList<>();
        int planned = 0;
        // Within one pass availability only shrinks (jobs start, instances get held), so a job that looks
        // exactly like one that already failed fails too: the queue of a busy cluster is mostly repeats.
        java.util.Set<List<Object>> failed = new java.util.HashSet<>();
        for (Iterator<JobSpec> it = waiting.values().iterator(); it.hasNext(); ) {
            JobSpec job = it.next();
            Map<Pool, int[]> picks = null;
            if (startable(job) && enoughFree(job)) { // the cheap tests first: most of a long queue fails them
                List<Object> shape = shape(job);
                picks = failed.contains(shape) ? null : place(job, now, false);
                if (picks == null) {
                    failed.add(shape);
                }
            }
            if (picks != null) {
                it.remove();
                commit(job, picks);
                started.add(new Decision.Started(job.id(), Grant.of(picks)));
            } else if (job.reserve() && planned < maxReservations) {
                planned += plan(job).isPresent() ? 1 : 0;
            }
        }
        return started;
    }
}
