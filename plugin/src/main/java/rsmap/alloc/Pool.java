// One resource map on one host: its instances, who holds each, and the time-bounded holds on them.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import rsmap.map.Instance;
import rsmap.map.ResourceMap;
import rsmap.request.Same;

/**
 * The instances of one map on one host and their use. Invariant: an instance is held by at most one
 * running job ({@code heldBy[i]}); holds (advance reservations and the reserved starts of waiting
 * jobs) cover instances over a time window and never by themselves make an instance busy now.
 */
final class Pool {
    final String host;
    final ResourceMap map;
    final Instance[] instances;
    /** Index of each instance's identifier among {@link #ids}: shares of one identifier share it. */
    final int[] idIndex;
    /** The distinct identifiers, in configured order of their first occurrence. */
    final String[] ids;
    /** The running job holding each instance, or null. */
    final String[] heldBy;
    /** Invariant: FREE exactly where {@link #heldBy} is null. */
    final InstanceState[] states;
    /**
     * Why each instance is tainted (docs/health.md: a sick card, a site's check, a drain), or null when
     * healthy. A tainted instance is never offered to a placement; a job holding it keeps it.
     */
    final String[] taint;
    /** When the holder's run time ends (its time + runtime), Long.MAX_VALUE when unlimited. */
    final long[] heldUntil;
    /** How many instances no running job holds: the cheap first test of every placement. */
    private int free;
    final List<Hold> holds;
    /** Instances of this host that exclude each other (configuration: shared between copies). */
    Exclusions exclusions = Exclusions.NONE;
    /** The pools of this pool's host by map name (set by {@link Host}), for {@link #exclusions}. */
    Map<String, Pool> siblings = Map.of();
    /** same= groups by name; configuration only, so shared between copies. */
    private final GroupCache groups;
    /** The instances of each identifier, built when first asked (restore); shared between copies. */
    private final IdCache byId;

    private static final class IdCache {
        private volatile Map<String, int[]> map;
    }

    /** The indexes of the instances (shares) with identifier {@code id}, in configured order. */
    int[] indexesOf(String id) {
        Map<String, int[]> m = byId.map;
        if (m == null) {
            Map<String, List<Integer>> lists = new HashMap<>();
            for (int i = 0; i < instances.length; i++) {
                lists.computeIfAbsent(instances[i].id(), k -> new ArrayList<>()).add(i);
            }
            m = new HashMap<>();
            for (Map.Entry<String, List<Integer>> e : lists.entrySet()) {
                m.put(e.getKey(), e.getValue().stream().mapToInt(Integer::intValue).toArray());
            }
            byId.map = m;
        }
        return m.getOrDefault(id, new int[0]);
    }

    /** Copy-on-write cache: most pools are never asked for groups, so an empty one costs nothing. */
    private static final class GroupCache {
        private volatile Map<String, Groups> byName = Map.of();

        Groups get(Pool pool, Same same) {
            Groups g = byName.get(same.name());
            if (g == null) {
                g = Groups.of(pool, same);
                Map<String, Groups> next = new HashMap<>(byName);
                next.put(same.name(), g);
                byName = Map.copyOf(next);
            }
            return g;
        }
    }

    Pool(String host, ResourceMap map) {
        this.host = host;
        this.map = map;
        this.instances = map.instances().toArray(new Instance[0]);
        this.idIndex = new int[instances.length];
        Map<String, Integer> index = new HashMap<>();
        List<String> distinct = new ArrayList<>();
        for (int i = 0; i < instances.length; i++) {
            Integer k = index.get(instances[i].id());
            if (k == null) {
                k = distinct.size();
                index.put(instances[i].id(), k);
                distinct.add(instances[i].id());
            }
            idIndex[i] = k;
        }
        this.ids = distinct.toArray(new String[0]);
        this.heldBy = new String[instances.length];
        this.states = new InstanceState[instances.length];
        Arrays.fill(states, InstanceState.FREE);
        this.heldUntil = new long[instances.length];
        this.taint = new String[instances.length];
        this.free = instances.length;
        this.holds = new ArrayList<>();
        this.groups = new GroupCache();
        this.byId = new IdCache();
    }

    private Pool(Pool o) {
        host = o.host;
        map = o.map;
        instances = o.instances;
        idIndex = o.idIndex;
        ids = o.ids;
        heldBy = o.heldBy.clone();
        states = o.states.clone();
        heldUntil = o.heldUntil.clone();
        taint = o.taint.clone();
        free = o.free;
        holds = new ArrayList<>(o.holds);
        exclusions = o.exclusions;
        groups = o.groups;
        byId = o.byId;
    }

    /** The groups of this pool under {@code same}, computed once. */
    Groups groups(Same same) {
        return groups.get(this, same);
    }

    Pool copy() {
        return new Pool(this);
    }

    int free() {
        return free;
    }

    String name() {
        return map.name();
    }

    int size() {
        return instances.length;
    }

    boolean isIdle() {
        return Arrays.stream(states).allMatch(s -> s == InstanceState.FREE) && holds.isEmpty();
    }

    void take(int[] picked, String job, long until) {
        for (int i : picked) {
            if (heldBy[i] != null) {
                throw new IllegalStateException(host + "/" + name() + " instance " + i + " already held by " + heldBy[i]);
            }
            heldBy[i] = job;
            states[i] = InstanceState.HELD;
            heldUntil[i] = until;
            free--;
        }
    }

    /** Instances {@code picked} of {@code job} are taken away by a realloc: still held, no longer used (RFC 51). */
    void giveBack(int[] picked, String job) {
        for (int i : picked) {
            if (!job.equals(heldBy[i]) || states[i] != InstanceState.HELD) {
                throw new IllegalStateException(host + "/" + name() + " instance " + i + " is not used by " + job);
            }
            states[i] = InstanceState.RELEASING;
        }
    }

    void release(int[] picked, String job) {
        for (int i : picked) {
            if (job.equals(heldBy[i])) {
                heldBy[i] = null;
                states[i] = InstanceState.FREE;
                heldUntil[i] = 0;
                free++;
            }
        }
    }

    /** The hold of {@code owner} on this pool, if any. */
    Hold holdOf(String owner, Hold.Kind kind) {
        for (Hold h : holds) {
            if (h.kind() == kind && h.owner().equals(owner)) {
                return h;
            }
        }
        return null;
    }

    /** The identifiers of instances {@code idx}, in that order: the one place indexes become identifiers. */
    List<String> idsOf(int[] idx) {
        List<String> out = new ArrayList<>(idx.length);
        for (int i : idx) {
            out.add(instances[i].id());
        }
        return out;
    }

    /**
     * The free instances with identifiers {@code wanted}, one distinct instance per entry, in order: the
     * one place identifiers (a grant from a journal) become instances again. It stops at the first
     * identifier without a free instance left, so it is shorter than {@code wanted} exactly then.
     */
    int[] freeInstancesOf(List<String> wanted) {
        int[] idx = new int[wanted.size()];
        java.util.BitSet taken = new java.util.BitSet();
        for (int k = 0; k < idx.length; k++) {
            int found = -1;
            for (int i : indexesOf(wanted.get(k))) {
                if (!taken.get(i) && heldBy[i] == null) {
                    found = i;
                    break;
                }
            }
            if (found < 0) {
                return Arrays.copyOf(idx, k);
            }
            taken.set(found);
            idx[k] = found;
        }
        return idx;
    }

    /** The instances advance reservation {@code ar} holds here (none when it holds nothing here). */
    boolean[] reservedFor(String ar) {
        boolean[] a = new boolean[size()];
        Hold h = holdOf(ar, Hold.Kind.AR);
        if (h != null) {
            for (int i : h.indices()) {
                a[i] = true;
            }
        }
        return a;
    }

    /**
     * Which instances {@code job} may take over {@code [from, to)}. Grid Engine's RSMAP manual: "A job running inside a
     * reservation is granted from that set, and a job running outside one is not granted an instance a
     * reservation holds for the time it runs." The reserved starts of other waiting jobs are respected
     * the same way, so backfilling never delays them.
     */
    boolean[] availableTo(JobSpec job, long from, long to, boolean planning, long now) {
        String ar = job.ar().orElse(null);
        boolean[] a;
        if (ar != null) {
            a = reservedFor(ar);
        } else {
            a = new boolean[size()];
            Arrays.fill(a, true);
        }
        for (int i = 0; i < a.length; i++) {
            // When planning, a holder's instances are free from the end of its run time on - unless it is
            // already overdue (ran past time + runtime without finishing): then nobody knows when.
            if (heldBy[i] != null && (!planning || heldUntil[i] > from || heldUntil[i] <= now) || taint[i] != null) {
                a[i] = false;
            }
        }
        for (Hold h : holds) {
            boolean foreign = h.kind() == Hold.Kind.AR ? !h.owner().equals(ar) : !h.owner().equals(job.id());
            if (foreign && h.overlaps(from, to)) {
                unmark(a, h);
            }
        }
        excluded(a);
        return a;
    }

    /** Unmarks in {@code a} the instances a held partner or a block excludes ({@link Exclusions}). */
    void excluded(boolean[] a) {
        if (exclusions.isEmpty()) {
            return;
        }
        for (int i = 0; i < a.length; i++) {
            if (a[i] && Exclusions.why(this, i, siblings) != null) {
                a[i] = false;
            }
        }
    }

    /** Instances an advance reservation over {@code [start, end)} may hold: not used by a job running into it, not reserved. */
    boolean[] reservable(long start, long end) {
        boolean[] a = new boolean[size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = (heldBy[i] == null || heldUntil[i] <= start) && taint[i] == null;
        }
        for (Hold h : holds) {
            if (h.kind() == Hold.Kind.AR && h.overlaps(start, end)) {
                unmark(a, h);
            }
        }
        return a;
    }

    private static void unmark(boolean[] a, Hold h) {
        for (int i : h.indices()) {
            a[i] = false;
        }
    }

    /** Taints (why not null) or clears (null) every share of identifier {@code id}; false when no instance has it. */
    boolean setTaint(String id, String why) {
        int[] idx = indexesOf(id);
        for (int i : idx) {
            taint[i] = why;
        }
        return idx.length > 0;
    }

    /** Adds to {@code times} every time after {@code now} at which something here is freed, or a hold starts or ends. */
    void changesAfter(long now, java.util.Collection<Long> times) {
        for (int i = 0; i < size(); i++) {
            if (heldBy[i] != null && heldUntil[i] > now && heldUntil[i] != JobSpec.UNLIMITED) {
                times.add(heldUntil[i]);
            }
        }
        for (Hold h : holds) {
            for (long t : new long[] {h.start(), h.end()}) {
                if (t > now && t != JobSpec.UNLIMITED) {
                    times.add(t);
                }
            }
        }
    }

    /** One line of {@link Cluster#dump()}: who holds what until when, and the holds. */
    void dump(StringBuilder b) {
        b.append(host).append('/').append(name()).append(' ').append(Arrays.toString(heldBy))
                .append(Arrays.toString(heldUntil));
        if (Arrays.asList(states).contains(InstanceState.RELEASING)) {
            b.append(Arrays.toString(states));
        }
        if (Arrays.stream(taint).anyMatch(java.util.Objects::nonNull)) {
            b.append(" taint").append(Arrays.toString(taint));
        }
        for (Hold x : holds) {
            b.append(' ').append(x.kind()).append(':').append(x.owner()).append('[').append(x.start()).append(',')
                    .append(x.end()).append(')').append(Arrays.toString(x.indices()));
        }
        b.append('\n');
    }

    /** Each instance's identifier and the job holding it ("" when free), in configured order. */
    List<Map.Entry<String, String>> holders() {
        List<Map.Entry<String, String>> list = new ArrayList<>(instances.length);
        for (int i = 0; i < instances.length; i++) {
            list.add(Map.entry(instances[i].id(), heldBy[i] == null ? "" : heldBy[i]));
        }
        return list;
    }
}
