// Host slots: each host's slot capacity, and the slots running jobs and planned starts take.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * A host without a capacity has no slot limit. Every job takes its slots on each of its
 * hosts while it runs; a waiting job with a reserved start takes them over its planned run, like the
 * JOB {@link Hold}s on instances. Invariant: {@code uses} holds exactly the running jobs' slots and the
 * plans of the last queue pass. Advance reservations hold instances, not slots.
 */
final class Slots {
    /** {@code n} slots of {@code host} taken by {@code owner} over {@code [start, end)}; planned or running. */
    private record Use(String owner, int n, long start, long end, boolean planned) {
    }

    private final Map<String, Integer> capacity = new HashMap<>();
    private final Map<String, List<Use>> uses = new HashMap<>();

    Slots copy() {
        Slots c = new Slots();
        c.capacity.putAll(capacity);
        uses.forEach((h, list) -> c.uses.put(h, new ArrayList<>(list)));
        return c;
    }

    void setCapacity(String host, OptionalInt slots) {
        if (slots.isPresent()) {
            capacity.put(host, slots.getAsInt());
        } else {
            capacity.remove(host);
        }
    }

    OptionalInt capacity(String host) {
        Integer c = capacity.get(host);
        return c == null ? OptionalInt.empty() : OptionalInt.of(c);
    }

    /** {@code job} started at {@code now}: it takes its slots until its run time ends. */
    void run(JobSpec job, long now) {
        job.hosts().forEach((h, n) -> uses.computeIfAbsent(h, k -> new ArrayList<>())
                .add(new Use(job.id(), n, now, job.endAt(now), false)));
    }

    /** {@code job} ended: its slots are free. */
    void end(JobSpec job) {
        job.hosts().keySet().forEach(h -> uses.getOrDefault(h, List.of()).removeIf(u -> !u.planned() && u.owner()
                .equals(job.id())));
    }

    /** {@code job} has a reserved start at {@code start}. */
    void plan(JobSpec job, long start) {
        job.hosts().forEach((h, n) -> uses.computeIfAbsent(h, k -> new ArrayList<>())
                .add(new Use(job.id(), n, start, job.endAt(start), true)));
    }

    /** A queue pass plans afresh. */
    void clearPlans() {
        uses.values().forEach(list -> list.removeIf(Use::planned));
    }

    /**
     * The slots of {@code host} free to {@code self} over {@code [from, to)}; Integer.MAX_VALUE without a
     * limit. When planning, a running job's slots are free from the end of its run time on, unless it is
     * overdue (as {@link Pool#availableTo} treats its instances).
     */
    int freeFor(String host, String self, long from, long to, boolean planning, long now) {
        Integer cap = capacity.get(host);
        if (cap == null) {
            return Integer.MAX_VALUE;
        }
        long taken = 0;
        for (Use u : uses.getOrDefault(host, List.of())) {
            boolean counts = u.planned() ? !u.owner().equals(self) && u.start() < to && from < u.end()
                    : !planning || u.end() > from || u.end() <= now;
            taken += counts ? u.n() : 0;
        }
        return (int) Math.max(0, cap - taken);
    }

    /** Whether every host of {@code job} has its slots free over {@code [from, to)}. */
    boolean fits(JobSpec job, long from, long to, boolean planning, long now) {
        for (Map.Entry<String, Integer> e : job.hosts().entrySet()) {
            if (freeFor(e.getKey(), job.id(), from, to, planning, now) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    /** Why {@code job} can never run: a host has fewer slots than it asks for there. */
    java.util.Optional<String> refusal(JobSpec job) {
        for (Map.Entry<String, Integer> e : job.hosts().entrySet()) {
            Integer cap = capacity.get(e.getKey());
            if (cap != null && cap < e.getValue()) {
                return java.util.Optional.of("host " + e.getKey() + " has " + cap + " slots; job " + job.id()
                        + " asks for " + e.getValue());
            }
        }
        return java.util.Optional.empty();
    }

    /** Adds to {@code times} when slots on {@code hosts} (all hosts when null) are freed after {@code now}. */
    void changesAfter(Collection<String> hosts, long now, Collection<Long> times) {
        for (Map.Entry<String, List<Use>> e : uses.entrySet()) {
            if (hosts != null && !hosts.contains(e.getKey())) {
                continue;
            }
            for (Use u : e.getValue()) {
                if (u.end() > now && u.end() != JobSpec.UNLIMITED) {
                    times.add(u.end());
                }
                if (u.planned() && u.start() > now) {
                    times.add(u.start());
                }
            }
        }
    }
}
