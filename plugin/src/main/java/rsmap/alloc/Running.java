// A running job: what it asked for, when it started, the instances it holds per pool, and their grant.
package rsmap.alloc;

import java.util.LinkedHashMap;
import java.util.Map;

/** Invariant: every instance in {@code picks} is held by this job; {@code grant} names them, made once at the start. */
record Running(JobSpec spec, long start, Map<Pool, int[]> picks, Grant grant) {
    /** Takes {@code picks} for {@code job} at {@code now}, until its run time ends. */
    static Running start(JobSpec job, long now, Map<Pool, int[]> picks) {
        long until = job.endAt(now);
        picks.forEach((pool, idx) -> pool.take(idx, job.id(), until));
        return new Running(job, now, picks, Grant.of(picks));
    }

    /** The instances held, pool by pool in the grant's order. */
    java.util.List<rsmap.map.Instance> instances() {
        java.util.List<rsmap.map.Instance> out = new java.util.ArrayList<>();
        picks.forEach((pool, idx) -> java.util.Arrays.stream(idx).forEach(i -> out.add(pool.instances[i])));
        return out;
    }

    /** Gives back what {@link #start} took. */
    void end() {
        picks.forEach((pool, idx) -> pool.release(idx, spec.id()));
    }

    /** The same job on the copies of its pools ({@code copies} maps each pool to its copy). */
    Running on(Map<Pool, Pool> copies) {
        Map<Pool, int[]> moved = new LinkedHashMap<>();
        picks.forEach((p, idx) -> moved.put(copies.get(p), idx));
        return new Running(spec, start, moved, grant);
    }
}
