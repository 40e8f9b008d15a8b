// The advance reservations of a cluster: their windows, whether a job may start in one, what they hold.
package rsmap.alloc;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Advance reservations by id (Grid Engine's RSMAP manual, "Inside an advance reservation"). A reservation holds its
 * instances over {@code [start, end)} through an AR {@link Hold} on each pool; an ended one stays
 * known until its id is reused or its host is reconfigured.
 */
final class Reservations {
    private final Map<String, ReservationSpec> byId = new LinkedHashMap<>();

    Optional<ReservationSpec> get(String id) {
        return Optional.ofNullable(byId.get(id));
    }

    Set<String> ids() {
        return byId.keySet();
    }

    /** Why {@code ar} cannot be made at {@code time} whatever its instances, if it cannot. */
    Optional<String> refusal(ReservationSpec ar, long time) {
        if (byId.containsKey(ar.id()) && byId.get(ar.id()).end() > time) {
            return Optional.of("advance reservation " + ar.id() + " exists");
        }
        if (ar.end() <= ar.start()) {
            return Optional.of("advance reservation " + ar.id() + " ends before it starts");
        }
        if (ar.end() <= time) {
            return Optional.of("advance reservation " + ar.id() + " would end before now (" + time + ")");
        }
        return Optional.empty();
    }

    /** A reservation sized like a job: its hosts, the first as master, its window as run time. */
    static JobSpec asJob(ReservationSpec ar) {
        return new JobSpec(ar.id(), ar.request(), ar.hosts(), ar.hosts().keySet().iterator().next(),
                ar.end() - ar.start(), Optional.empty(), false);
    }

    /** The instances {@code ar} may hold: none used by a job running into it, none reserved. */
    static Optional<Map<Pool, int[]>> place(ReservationSpec ar, Demands.Each demands) {
        return demands.place(p -> p.reservable(ar.start(), ar.end()));
    }

    /** Records {@code ar}, holding {@code picks} over its window. */
    void add(ReservationSpec ar, Map<Pool, int[]> picks) {
        picks.forEach((pool, idx) -> pool.holds.add(new Hold(Hold.Kind.AR, ar.id(), ar.start(), ar.end(), idx)));
        byId.put(ar.id(), ar);
    }

    /** Why {@code job} cannot run in the reservation it names, if it names one and cannot. */
    Optional<String> refusalOf(JobSpec job, long time, Demands.Each demands) {
        if (job.ar().isEmpty()) {
            return Optional.empty();
        }
        ReservationSpec ar = byId.get(job.ar().get());
        if (ar == null) {
            return Optional.of("unknown advance reservation " + job.ar().get());
        }
        if (ar.end() <= time) {
            return Optional.of("advance reservation " + ar.id() + " has ended");
        }
        // Grid Engine's RSMAP manual: "A job whose request cannot be met from the reserved instances is refused when it is
        // submitted." Whoever uses them now.
        if (demands.place(p -> p.reservedFor(ar.id())).isEmpty()) {
            return Optional.of("the request cannot be met from the instances of advance reservation " + ar.id());
        }
        return Optional.empty();
    }

    /** Whether {@code job} may start at {@code now}: outside any reservation, or inside its window. */
    boolean admits(JobSpec job, long now) {
        if (job.ar().isPresent()) {
            ReservationSpec ar = byId.get(job.ar().get());
            return ar != null && ar.start() <= now && now < ar.end();
        }
        return true;
    }

    /** Whether a reservation started or ended in {@code (after, upTo]}. */
    boolean boundaryIn(long after, long upTo) {
        for (ReservationSpec ar : byId.values()) {
            if ((ar.start() > after && ar.start() <= upTo) || (ar.end() > after && ar.end() <= upTo)) {
                return true;
            }
        }
        return false;
    }

    /** Adds every reservation start after {@code now} to {@code times}. */
    void startsAfter(long now, Collection<Long> times) {
        for (ReservationSpec ar : byId.values()) {
            if (ar.start() > now) {
                times.add(ar.start());
            }
        }
    }

    Reservations copy() {
        Reservations c = new Reservations();
        c.byId.putAll(byId);
        return c;
    }
}
