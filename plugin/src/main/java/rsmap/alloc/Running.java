// A running job: what it asked for, when it started, the instances it holds per pool, and their grant.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import rsmap.map.Instance;

/**
 * Invariant: every instance in {@code picks} and {@code releasing} is held by this job, the two are
 * disjoint, those of {@code releasing} are in state RELEASING (taken away by a realloc, not yet released:
 * RFC 51 "Resource release"); {@code grant} names exactly {@code picks}: what the job may use now.
 */
record Running(JobSpec spec, long start, Map<Pool, int[]> picks, Map<Pool, int[]> releasing, Grant grant) {
    /** Takes {@code picks} for {@code job} at {@code now}, until its run time ends. */
    static Running start(JobSpec job, long now, Map<Pool, int[]> picks) {
        long until = job.endAt(now);
        picks.forEach((pool, idx) -> pool.take(idx, job.id(), until));
        return new Running(job, now, picks, Map.of(), Grant.of(picks));
    }

    /** The instances held, pool by pool in the grant's order, then those being given back. */
    List<Instance> instances() {
        List<Instance> out = new ArrayList<>();
        picks.forEach((pool, idx) -> Arrays.stream(idx).forEach(i -> out.add(pool.instances[i])));
        releasing.forEach((pool, idx) -> Arrays.stream(idx).forEach(i -> out.add(pool.instances[i])));
        return out;
    }

    /** Gives back what the job holds, being given back or not. */
    void end() {
        picks.forEach((pool, idx) -> pool.release(idx, spec.id()));
        releasing.forEach((pool, idx) -> pool.release(idx, spec.id()));
    }

    /** The job also holding the free instances {@code added}, until its run time ends; listed in configured order. */
    Running grown(Map<Pool, int[]> added) {
        long until = spec.endAt(start);
        added.forEach((pool, idx) -> pool.take(idx, spec.id(), until));
        Map<Pool, int[]> next = merge(picks, added);
        next.replaceAll((pool, idx) -> added.containsKey(pool) ? sorted(idx) : idx);
        return new Running(spec, start, next, releasing, Grant.of(next));
    }

    /** The job no longer using {@code taken} (a subset of its picks): they are held, being given back. */
    Running shrunk(Map<Pool, int[]> taken) {
        taken.forEach((pool, idx) -> pool.giveBack(idx, spec.id()));
        Map<Pool, int[]> next = minus(picks, taken);
        return new Running(spec, start, next, merge(releasing, taken), Grant.of(next));
    }

    /** The job having let go of {@code freed} (a subset of {@code releasing}): they are free. */
    Running released(Map<Pool, int[]> freed) {
        freed.forEach((pool, idx) -> pool.release(idx, spec.id()));
        return new Running(spec, start, picks, minus(releasing, freed), grant);
    }

    /** The same job on the copies of its pools ({@code copies} maps each pool to its copy). */
    Running on(Map<Pool, Pool> copies) {
        return new Running(spec, start, moved(picks, copies), moved(releasing, copies), grant);
    }

    private static Map<Pool, int[]> moved(Map<Pool, int[]> m, Map<Pool, Pool> copies) {
        Map<Pool, int[]> out = new LinkedHashMap<>();
        m.forEach((p, idx) -> out.put(copies.get(p), idx));
        return out;
    }

    private static Map<Pool, int[]> merge(Map<Pool, int[]> a, Map<Pool, int[]> b) {
        Map<Pool, int[]> out = new LinkedHashMap<>(a);
        b.forEach((pool, idx) -> out.merge(pool, idx, (x, y) -> {
            int[] both = Arrays.copyOf(x, x.length + y.length);
            System.arraycopy(y, 0, both, x.length, y.length);
            return both;
        }));
        return out;
    }

    /** {@code a} without the instances of {@code b}, order kept; pools left empty are dropped. */
    private static Map<Pool, int[]> minus(Map<Pool, int[]> a, Map<Pool, int[]> b) {
        Map<Pool, int[]> out = new LinkedHashMap<>();
        a.forEach((pool, idx) -> {
            int[] gone = b.getOrDefault(pool, new int[0]);
            int[] left = Arrays.stream(idx).filter(i -> Arrays.stream(gone).noneMatch(g -> g == i)).toArray();
            if (left.length > 0) {
                out.put(pool, left);
            }
        });
        return out;
    }

    private static int[] sorted(int[] idx) {
        int[] s = idx.clone();
        Arrays.sort(s);
        return s;
    }
}
