// A waiting job that decides how to run each time it is tried (placement and alternatives).
package rsmap.alloc;

import java.util.Optional;

/**
 * The queue asks a choosing job, at every pass, how it would run: the core checks and commits what it
 * answers; the choice itself (rsmap.place) only reads the cluster through its public queries
 * ({@link Cluster#fits}, {@link Cluster#freeSlots}, {@link Cluster#changesAfter}). Exactly one concrete
 * {@link JobSpec} is ever started for the job.
 */
public interface Chooser {
    /** The job as it starts now, if one of its ways can start now (the highest ordered). */
    Optional<JobSpec> now(Cluster cluster);

    /** The way with the earliest start later, if any (ties by order): its start is reserved. */
    Optional<Planned> plan(Cluster cluster);

    /** A reserved start: {@code job} (concrete hosts) at {@code start}. */
    record Planned(long start, JobSpec job) {
    }
}
