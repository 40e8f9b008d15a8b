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
    /** When the holder's run time ends (its time + runtime), Long.MAX_VALUE when unlimited. */
    final long[] heldUntil;
    /** How many instances no running job holds: the cheap first test of every placement. */
    private int free;
    final List<Hold> holds;
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
        this.heldUntil = new long[instances.length];
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
        heldUntil = o.heldUntil.clone();
        free = o.free;
        holds = new ArrayList<>(o.holds);
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
        return Arrays.stream(heldBy).allMatch(h -> h == null) && holds.isEmpty();
    }

    void take(int[] picked, String job, long until) {
        for (int i : picked) {
            if (heldBy[i] != null) {
                throw new IllegalStateException(host + "/" + name() + " instance " + i + " already held by " + heldBy[i]);
            }
            heldBy[i] = job;
            heldUntil[i] = until;
            free--;
        }
    }

    void release(int[] picked, String job) {
        for (int i : picked) {
            if (job.equals(heldBy[i])) {
                heldBy[i] = null;
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
}
