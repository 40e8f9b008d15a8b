// The choice of instances for one request: filters, same= groups, scope=, and the policy that keeps
// whole groups free.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.request.ResourceRequest;
import rsmap.request.Scope;

/**
 * Chooses instances deterministically. The policy (documented in docs/allocation.md):
 * <ol>
 * <li>Only instances that are available to the job and satisfy id= and every characteristic qualify.
 * <li>Without same=, identifiers already partly used by running jobs come first, then the one with
 *     the fewest qualifying free shares, ties by configured order. A single share so goes onto an
 *     already partly used card rather than opening a fresh one, which keeps whole cards free for
 *     same=id requests.
 * <li>With same=, the group is chosen best fit: the smallest group that is large enough, ties by
 *     configured order; within it identifiers are again used fullest first.
 * <li>With scope=job over several pools, one group key is chosen for all of them: the key large
 *     enough in every pool with the smallest total, ties by order of first appearance.
 * <li>A scope=job request pinned to a key ({@link GroupKeys}: the group was chosen for the whole job at
 *     another host) takes instances of that group in every pool, fullest first, or none at all.
 * </ol>
 */
final class Placement {
    private Placement() {
    }

    /**
     * Instances for one request: {@code needs} maps each pool to how many instances it must give,
     * {@code available} says per pool which instances the job may take. Empty when the request cannot
     * be met.
     */
    static Optional<Map<Pool, int[]>> place(ResourceRequest r, Map<Pool, Integer> needs, Map<Pool, boolean[]> available) {
        return place(r, Optional.empty(), needs, available);
    }

    /** As {@link #place(ResourceRequest, Map, Map)}, a scope=job request held to group {@code pin} when present. */
    static Optional<Map<Pool, int[]>> place(ResourceRequest r, Optional<String> pin, Map<Pool, Integer> needs,
                                            Map<Pool, boolean[]> available) {
        Map<Pool, boolean[]> qualifying = new LinkedHashMap<>();
        needs.forEach((pool, n) -> qualifying.put(pool, qualifying(pool, r, available.get(pool))));
        Map<Pool, int[]> out = new LinkedHashMap<>();
        if (pin.isPresent() && GroupKeys.spansJob(r)) {
            for (Map.Entry<Pool, Integer> e : needs.entrySet()) {
                Groups groups = e.getKey().groups(r.same().get());
                Optional<int[]> pick = pickInGroup(e.getKey(), qualifying.get(e.getKey()), groups,
                        groups.named(pin.get()), e.getValue());
                if (pick.isEmpty()) {
                    return Optional.empty();
                }
                out.put(e.getKey(), pick.get());
            }
            return Optional.of(out);
        }
        if (r.same().isPresent() && r.effectiveScope() == Scope.JOB && needs.size() > 1) {
            Optional<Object> key = commonKey(r, needs, qualifying);
            if (key.isEmpty()) {
                return Optional.empty();
            }
            for (Map.Entry<Pool, Integer> e : needs.entrySet()) {
                Groups groups = e.getKey().groups(r.same().get());
                Optional<int[]> pick = pickInGroup(e.getKey(), qualifying.get(e.getKey()), groups,
                        groups.find(key.get()), e.getValue());
                if (pick.isEmpty()) {
                    return Optional.empty();
                }
                out.put(e.getKey(), pick.get());
            }
            return Optional.of(out);
        }
        for (Map.Entry<Pool, Integer> e : needs.entrySet()) {
            Pool pool = e.getKey();
            Optional<int[]> pick;
            if (r.same().isPresent()) {
                Groups groups = pool.groups(r.same().get());
                int[] sizes = groupSizes(qualifying.get(pool), groups);
                int best = bestFit(sizes, e.getValue());
                pick = pickInGroup(pool, qualifying.get(pool), groups, best, e.getValue());
            } else {
                pick = fullestFirst(pool, qualifying.get(pool), e.getValue());
            }
            if (pick.isEmpty()) {
                return Optional.empty();
            }
            out.put(pool, pick.get());
        }
        return Optional.of(out);
    }

    /** Available instances that satisfy id= and the characteristics, decided once per identifier. */
    static boolean[] qualifying(Pool pool, ResourceRequest r, boolean[] available) {
        int[] admitted = new int[pool.ids.length]; // 0 unknown, 1 yes, 2 no
        boolean[] q = new boolean[pool.size()];
        for (int i = 0; i < q.length; i++) {
            if (!available[i]) {
                continue;
            }
            int k = pool.idIndex[i];
            if (admitted[k] == 0) {
                admitted[k] = r.admits(pool.instances[i]) ? 1 : 2;
            }
            q[i] = admitted[k] == 1;
        }
        return q;
    }

    static int[] groupSizes(boolean[] qualifying, Groups groups) {
        int[] sizes = new int[groups.keys.length];
        for (int i = 0; i < qualifying.length; i++) {
            if (qualifying[i] && groups.groupOf[i] >= 0) {
                sizes[groups.groupOf[i]]++;
            }
        }
        return sizes;
    }

    /** The smallest group holding at least {@code n}, first in configured order on ties; -1 if none. */
    static int bestFit(int[] sizes, int n) {
        int best = -1;
        for (int g = 0; g < sizes.length; g++) {
            if (sizes[g] >= n && (best < 0 || sizes[g] < sizes[best])) {
                best = g;
            }
        }
        return best;
    }

    /** The group key every pool can serve, smallest total first; empty when there is none. */
    private static Optional<Object> commonKey(ResourceRequest r, Map<Pool, Integer> needs, Map<Pool, boolean[]> qualifying) {
        List<Object> order = new ArrayList<>();
        Map<Object, Long> total = new LinkedHashMap<>();
        boolean first = true;
        for (Map.Entry<Pool, Integer> e : needs.entrySet()) {
            Groups groups = e.getKey().groups(r.same().get());
            int[] sizes = groupSizes(qualifying.get(e.getKey()), groups);
            Map<Object, Long> here = new LinkedHashMap<>();
            for (int g = 0; g < sizes.length; g++) {
                if (sizes[g] >= e.getValue()) {
                    here.put(groups.keys[g], (long) sizes[g]);
                }
            }
            if (first) {
                order.addAll(here.keySet());
                total.putAll(here);
                first = false;
            } else {
                total.keySet().retainAll(here.keySet());
                here.forEach((k, v) -> total.computeIfPresent(k, (kk, t) -> t + v));
            }
        }
        Object best = null;
        for (Object k : order) {
            if (total.containsKey(k) && (best == null || total.get(k) < total.get(best))) {
                best = k;
            }
        }
        return Optional.ofNullable(best);
    }

    /** {@code n} qualifying instances of group {@code group} (-1: no group), fullest first. */
    private static Optional<int[]> pickInGroup(Pool pool, boolean[] qualifying, Groups groups, int group, int n) {
        if (group < 0) {
            return Optional.empty();
        }
        boolean[] inGroup = new boolean[qualifying.length];
        for (int i = 0; i < qualifying.length; i++) {
            inGroup[i] = qualifying[i] && groups.groupOf[i] == group;
        }
        return fullestFirst(pool, inGroup, n);
    }

    /** {@code n} of the candidates, identifiers with the fewest candidates first; empty if too few. */
    static Optional<int[]> fullestFirst(Pool pool, boolean[] candidates, int n) {
        if (n == 0) {
            return Optional.of(new int[0]);
        }
        int ids = pool.ids.length;
        int[] count = new int[ids];
        int[] firstAt = new int[ids];
        Arrays.fill(firstAt, -1);
        boolean[] inUse = new boolean[ids];
        int total = 0;
        for (int i = 0; i < candidates.length; i++) {
            int k = pool.idIndex[i];
            inUse[k] |= pool.heldBy[i] != null;
            if (candidates[i]) {
                if (count[k]++ == 0) {
                    firstAt[k] = i;
                }
                total++;
            }
        }
        if (total < n) {
            return Optional.empty();
        }
        Integer[] order = new Integer[ids];
        int used = 0;
        for (int k = 0; k < ids; k++) {
            if (count[k] > 0) {
                order[used++] = k;
            }
        }
        // Partly used identifiers first, then the fewest qualifying shares, then configured order.
        Arrays.sort(order, 0, used, (a, b) -> inUse[a] != inUse[b] ? (inUse[a] ? -1 : 1)
                : count[a] != count[b] ? Integer.compare(count[a], count[b]) : Integer.compare(firstAt[a], firstAt[b]));
        int[] rank = new int[ids];
        Arrays.fill(rank, Integer.MAX_VALUE);
        for (int r = 0; r < used; r++) {
            rank[order[r]] = r;
        }
        // Take the candidates of the identifiers in rank order; within one identifier, by index.
        int[] pick = new int[n];
        int got = 0;
        int[] byRank = new int[total];
        int[] start = new int[used + 1];
        for (int r = 0; r < used; r++) {
            start[r + 1] = start[r] + count[order[r]];
        }
        int[] fill = Arrays.copyOf(start, used);
        for (int i = 0; i < candidates.length; i++) {
            if (candidates[i]) {
                byRank[fill[rank[pool.idIndex[i]]]++] = i;
            }
        }
        for (int j = 0; j < total && got < n; j++) {
            if (!apartFromPicked(pool, byRank[j], pick, got)) {
                pick[got++] = byRank[j];
            }
        }
        if (got < n) {
            return Optional.empty(); // partners left too few (Exclusions)
        }
        Arrays.sort(pick);
        return Optional.of(pick);
    }

    /** Whether instance {@code i} excludes one of the first {@code got} of {@code pick}. */
    private static boolean apartFromPicked(Pool pool, int i, int[] pick, int got) {
        for (int k = 0; k < got; k++) {
            if (Exclusions.apart(pool, i, pick[k])) {
                return true;
            }
        }
        return false;
    }
}
