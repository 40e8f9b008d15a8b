// What a running job holds and how a realloc changes it: grow, take away, give back, restore.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.request.RequestList;
import rsmap.request.ResourceRequest;
import rsmap.request.Same;

/**
 * The mechanism under RFC 51 reallocation (the policy - waiting, answers, order - is {@code rsmap.realloc}'s).
 * A job's instances are HELD (its grant: what it may use now) or RELEASING (taken away, not yet released;
 * not grantable to anyone). Operations check everything before they change anything.
 */
public final class Holdings {
    private final Cluster cluster;

    public Holdings(Cluster cluster) {
        this.cluster = cluster;
    }

    /** Waiting claims (reallocs) join every pass of the queue from now on. */
    public void register(Claims claims) {
        cluster.waiters().setClaims(claims);
    }

    /** A new place at the end of the one order of waiters ({@link ServingOrder}). */
    public long nextPlace() {
        return cluster.waiters().nextPlace();
    }

    /** How many jobs the queue's passes have started so far: a claim met now follows exactly these starts. */
    public long starts() {
        return cluster.waiters().starts();
    }

    /** The instances taken away from {@code job} and not yet released (none when it does not run). */
    public Grant releasingOf(String job) {
        Running r = cluster.running().get(job);
        return r == null ? Grant.NONE : Grant.of(r.releasing());
    }

    /** How many instances {@code add} asks of {@code job}'s hosts (0 where it cannot be served). */
    public int sizeOf(String job, RequestList add) {
        Running r = cluster.running().get(job);
        if (r == null) {
            return 0;
        }
        return demands(r, add).each().map(e -> e.list().stream()
                .mapToInt(d -> d.perPool().values().stream().mapToInt(Integer::intValue).sum()).sum()).orElse(0);
    }

    /**
     * Tries to add {@code add} to running {@code job} and take away {@code sub} (chosen among {@code ids}
     * when given) or exactly {@code ids} (without {@code sub}). Added instances obey the request's rules
     * and are free, available over the job's remaining run time; where the job's own request for the map
     * says {@code same=S} and {@code add} does too, they agree with what the job holds (on the host, or
     * in every pool under scope=job). Taken-away instances are chosen among those the job uses now, before
     * anything is added, like a grant: identifiers with fewest of the job's shares first.
     */
    public Change change(String job, Optional<RequestList> add, Optional<RequestList> sub, Grant ids) {
        Running r = cluster.running().get(job);
        if (r == null) {
            return Change.never("job " + job + " is not running");
        }
        Map<Pool, int[]> removed = new LinkedHashMap<>();
        if (sub.isPresent() || !ids.isEmpty()) {
            Optional<String> why = takeAway(r, sub, ids, removed);
            if (why.isPresent()) {
                return Change.never(why.get());
            }
        }
        Map<Pool, int[]> added = new LinkedHashMap<>();
        if (add.isPresent()) {
            Demands d = demands(r, add.get());
            if (d.each().isEmpty()) {
                return Change.never(d.refusal().orElseThrow());
            }
            if (place(r, d.each().get(), true).isEmpty()) {
                List<String> agreeing = d.each().get().list().stream().filter(x -> ownSame(r, x.request()).isPresent())
                        .map(x -> x.request().name() + " on " + x.request().same().get()).toList();
                return Change.never("job " + job + " can never be given " + add.get() + ": not enough instances"
                        + " qualify on its hosts beside what it uses" + (agreeing.isEmpty() ? ""
                        : " and agree with what it holds (" + String.join(", ", agreeing) + ")"));
            }
            Optional<Map<Pool, int[]>> now = d.each().get().enoughFree() ? place(r, d.each().get(), false)
                    : Optional.empty();
            if (now.isEmpty()) {
                return Change.NOT_YET;
            }
            added = now.get();
        }
        cluster.running().put(job, r.shrunk(removed).grown(added));
        return Change.met(added, removed);
    }

    /**
     * Frees instances {@code ids} that a realloc took away from {@code job} and that it now released,
     * then retries the waiters. Refused, with nothing changed, when any of them was not taken away.
     */
    public Decision release(String job, Grant ids, long time) {
        Running r = cluster.running().get(job);
        Map<Pool, int[]> freed = new LinkedHashMap<>();
        Optional<String> error = time < cluster.now()
                ? Optional.of("time " + time + " is before the current time " + cluster.now())
                : r == null ? Optional.of("job " + job + " is not running")
                : ids.isEmpty() ? Optional.of("nothing to release")
                : resolve(r, ids, r.releasing(), "was not taken away from job " + job, freed);
        if (error.isPresent()) {
            return Decision.refused(error.get());
        }
        List<Decision.Started> started = new ArrayList<>(cluster.advance(time).started());
        cluster.running().put(job, cluster.running().get(job).released(freed));
        started.addAll(cluster.waiters().pass());
        return Decision.ok(started);
    }

    /**
     * Puts a job back exactly as it was (a daemon's journal replay): {@code grant} (what it uses) and
     * {@code releasing} (taken away, not yet released), no choice made again; refused with nothing
     * changed as {@link Cluster#restore} is. The decision's grant is {@code grant}.
     */
    public Decision restore(JobSpec job, Grant grant, Grant releasing, long time) {
        Decision d = cluster.restore(job, grant.plus(releasing), time);
        if (d.isRefused() || releasing.isEmpty()) {
            return d;
        }
        Running r = cluster.running().get(job.id());
        Map<Pool, int[]> taken = new LinkedHashMap<>();
        resolve(r, releasing, r.picks(), "", taken).ifPresent(e -> {
            throw new IllegalStateException("restored job " + job.id() + " lacks " + e);
        });
        cluster.running().put(job.id(), r.shrunk(taken));
        return Decision.granted(grant);
    }

    // --- the parts ---

    private Demands demands(Running r, RequestList request) {
        JobSpec s = r.spec();
        return cluster.configured().demandsOf(new JobSpec(s.id(), request, s.hosts(), s.master(), s.runtime(), s.ar(),
                false));
    }

    /** Why the take-away cannot be made; else fills {@code into} with it. */
    private Optional<String> takeAway(Running r, Optional<RequestList> sub, Grant ids, Map<Pool, int[]> into) {
        Map<Pool, int[]> named = new LinkedHashMap<>();
        if (!ids.isEmpty()) {
            Optional<String> why = resolve(r, ids, r.picks(), "is not used by job " + r.spec().id(), named);
            if (why.isPresent() || sub.isEmpty()) {
                into.putAll(named);
                return why;
            }
        }
        Demands d = demands(r, sub.get());
        if (d.each().isEmpty()) {
            return d.refusal();
        }
        Map<Pool, int[]> offer = ids.isEmpty() ? r.picks() : named;
        for (Demand demand : d.each().get().list()) {
            Map<Pool, boolean[]> offered = new LinkedHashMap<>();
            demand.perPool().keySet().forEach(p -> offered.put(p, mask(p, offer.getOrDefault(p, new int[0]))));
            Optional<Map<Pool, int[]>> picks = Placement.place(demand.request(), demand.perPool(), offered);
            if (picks.isEmpty()) {
                return Optional.of("job " + r.spec().id() + " does not use enough instances to take away "
                        + demand.request() + (ids.isEmpty() ? "" : " from the ones named"));
            }
            into.putAll(picks.get());
        }
        return Optional.empty();
    }

    /** The instances for {@code d} now (free, available), or ever (anything the job does not use). */
    private Optional<Map<Pool, int[]>> place(Running r, Demands.Each d, boolean ever) {
        long now = cluster.now();
        long end = r.spec().endAt(r.start());
        Map<Pool, int[]> all = new LinkedHashMap<>();
        for (Demand demand : d.list()) {
            Map<Pool, boolean[]> offered = new LinkedHashMap<>();
            for (Pool p : demand.perPool().keySet()) {
                boolean[] a;
                if (ever) {
                    a = r.spec().ar().isPresent() ? p.reservedFor(r.spec().ar().get()) : all(p.size());
                    for (int i : r.picks().getOrDefault(p, new int[0])) {
                        a[i] = false;
                    }
                } else {
                    a = p.availableTo(r.spec(), now, end, false, now);
                }
                offered.put(p, agreeing(r, demand, p, a));
            }
            Optional<Map<Pool, int[]>> picks = Placement.place(demand.request(), demand.perPool(), offered);
            if (picks.isEmpty()) {
                return Optional.empty();
            }
            all.putAll(picks.get());
        }
        return Optional.of(all);
    }

    /**
     * {@code a}, narrowed to the group the job holds where its own request for the map and the added one
     * both say the same {@code same=}; the job holding instances of more than one group there gets none.
     */
    private static boolean[] agreeing(Running r, Demand demand, Pool p, boolean[] a) {
        ResourceRequest add = demand.request();
        Optional<ResourceRequest> own = ownSame(r, add);
        if (own.isEmpty()) {
            return a;
        }
        Same same = own.get().same().orElseThrow();
        boolean wide = add.effectiveScope() == rsmap.request.Scope.JOB
                || own.get().effectiveScope() == rsmap.request.Scope.JOB;
        Set<Object> keys = new LinkedHashSet<>();
        r.picks().forEach((q, idx) -> {
            if (q == p || wide && q.name().equals(p.name())) {
                Groups g = q.groups(same);
                for (int i : idx) {
                    if (g.groupOf[i] >= 0) {
                        keys.add(g.keys[g.groupOf[i]]);
                    }
                }
            }
        });
        if (keys.isEmpty()) {
            return a;
        }
        Groups g = p.groups(same);
        int group = keys.size() == 1 ? g.find(keys.iterator().next()) : -1;
        for (int i = 0; i < a.length; i++) {
            a[i] &= group >= 0 && g.groupOf[i] == group;
        }
        return a;
    }

    /** The job's own request for {@code add}'s map, where both say the same same= (then added instances agree). */
    private static Optional<ResourceRequest> ownSame(Running r, ResourceRequest add) {
        return r.spec().request().resourceRequests().stream()
                .filter(x -> x.name().equals(add.name()) && x.same().isPresent() && x.same().equals(add.same()))
                .findFirst();
    }

    /**
     * Finds each identifier of {@code ids} (one instance per entry, shares repeat) among {@code among}
     * into {@code into}; why not ("host/map id " + {@code missing}) for the first one it cannot.
     */
    private Optional<String> resolve(Running r, Grant ids, Map<Pool, int[]> among, String missing,
                                     Map<Pool, int[]> into) {
        for (var host : ids.byHost().entrySet()) {
            for (var map : host.getValue().entrySet()) {
                Optional<Pool> p = cluster.configured().pool(host.getKey(), map.getKey());
                if (p.isEmpty()) {
                    return Optional.of("host " + host.getKey() + " has no map " + map.getKey());
                }
                int[] candidates = among.getOrDefault(p.get(), new int[0]);
                BitSet chosen = new BitSet();
                int[] got = new int[map.getValue().size()];
                for (int k = 0; k < got.length; k++) {
                    String id = map.getValue().get(k);
                    int found = -1;
                    for (int i : candidates) {
                        if (!chosen.get(i) && p.get().instances[i].id().equals(id)) {
                            found = i;
                            break;
                        }
                    }
                    if (found < 0) {
                        return Optional.of(host.getKey() + "/" + map.getKey() + " " + id + " " + missing);
                    }
                    chosen.set(found);
                    got[k] = found;
                }
                into.merge(p.get(), got, (x, y) -> {
                    throw new IllegalArgumentException("host and map given twice");
                });
            }
        }
        return Optional.empty();
    }

    private static boolean[] mask(Pool p, int[] idx) {
        boolean[] a = new boolean[p.size()];
        for (int i : idx) {
            a[i] = true;
        }
        return a;
    }

    private static boolean[] all(int n) {
        boolean[] a = new boolean[n];
        java.util.Arrays.fill(a, true);
        return a;
    }
}
