// The realloc state machine of one cluster (Flux RFC 51): answer now, wait, cancel, release, job end.
package rsmap.realloc;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import rsmap.alloc.Change;
import rsmap.alloc.Claims;
import rsmap.alloc.Cluster;
import rsmap.alloc.Decision;
import rsmap.alloc.Grant;
import rsmap.alloc.Holdings;
import rsmap.alloc.JobSpec;
import rsmap.alloc.Positions;

/**
 * Reallocation of running jobs over a {@link Cluster} (issue 13, RFC 51). A realloc is answered at once
 * when it can be met (SUCCESS) or never can (DENY: unknown job, more than the pool holds, filtered to
 * nothing, a take-away of more than the job uses), and otherwise waits; waiting reallocs are served in
 * their {@link Policy}'s order, and against queued jobs in the one order of
 * {@code rsmap.alloc.ServingOrder}. Taken-away instances stay held until the job releases them. With
 * reallocation off every realloc is UNSUPPORTED. Not thread-safe, like the cluster: callers serialise
 * every operation on both. Every operation on the cluster made outside this class should be followed by
 * {@link #events(Decision)}, which also gives the answers of waiting reallocs it caused.
 */
public final class Reallocs {
    private final Cluster cluster;
    private final Holdings holdings;
    /** Invariant: every waiting realloc's job is running, and no two share job and tag; by arrival. */
    private final List<Waiting> waiting = new ArrayList<>();
    /** Answers decided inside the queue's passes, each with how many job starts preceded it. */
    private final List<Pending> outbox = new ArrayList<>();
    private boolean enabled = true;
    private Policy policy = Policy.FIFO;
    /** Invariant: above every alloc_id answered so far, 1 at the start (0 is never an alloc_id). */
    private long nextAllocId = 1;

    private record Pending(long afterStarts, Answer answer) {
    }

    public Reallocs(Cluster cluster) {
        this.cluster = Objects.requireNonNull(cluster);
        this.holdings = new Holdings(cluster);
        holdings.register(this::claims);
    }

    public Cluster cluster() {
        return cluster;
    }

    public boolean enabled() {
        return enabled;
    }

    /** Turns reallocation on or off; off answers every waiting realloc UNSUPPORTED (returned). */
    public List<Event> setEnabled(boolean on) {
        enabled = on;
        List<Event> out = new ArrayList<>();
        if (!on) {
            waiting.forEach(w -> out.add(new Event.Reply(answer(w.realloc(), Answer.Type.UNSUPPORTED,
                    "reallocation is off"))));
            waiting.clear();
        }
        return out;
    }

    /** The last alloc id handed out (0: none yet). */
    public long lastAllocId() {
        return nextAllocId - 1;
    }

    public Policy policy() {
        return policy;
    }

    public void setPolicy(Policy p) {
        policy = Objects.requireNonNull(p);
    }

    /**
     * After a restart: the next answer's alloc_id is above {@code lastAllocId}, the last one a journal
     * recorded (RFC 51: "Unique ID assigned to this request by the scheduler", so unique across restarts
     * too). Never lowers it: the next is max(next, lastAllocId + 1).
     *
     * @throws IllegalArgumentException when {@code lastAllocId} is negative or has no successor
     */
    public void continueAfter(long lastAllocId) {
        if (lastAllocId < 0 || lastAllocId == Long.MAX_VALUE) {
            throw new IllegalArgumentException("last alloc_id must be 0 to " + (Long.MAX_VALUE - 1) + ", not "
                    + lastAllocId);
        }
        nextAllocId = Math.max(nextAllocId, lastAllocId + 1);
    }

    /** The waiting reallocs, in the order they are served. */
    public List<Waiting> waiting() {
        return policy.order(waiting);
    }

    /** The instances taken away from {@code job} that it has not released yet. */
    public Grant releasingOf(String job) {
        return holdings.releasingOf(job);
    }

    /**
     * A realloc at {@code time}: its answer, or none while it waits; the events are what letting the time
     * pass caused (jobs started, waiting reallocs answered).
     */
    public Outcome realloc(Realloc r, long time) {
        if (!enabled) {
            return answered(answer(r, Answer.Type.UNSUPPORTED, "reallocation is off"), List.of());
        }
        if (time < cluster.now()) {
            return answered(answer(r, Answer.Type.DENY, "time " + time + " is before the current time "
                    + cluster.now()), List.of());
        }
        List<Event> events = events(cluster.advance(time));
        Optional<String> never = precheck(r);
        if (never.isPresent()) {
            return answered(answer(r, Answer.Type.DENY, never.get()), events);
        }
        Change c = holdings.change(r.job(), r.add(), r.sub(), r.ids());
        if (c.kind() == Change.Kind.NOT_YET) {
            waiting.add(new Waiting(r, holdings.nextPlace(),
                    r.add().map(a -> holdings.sizeOf(r.job(), a)).orElse(0), time));
            return Outcome.done(Optional.empty(), events);
        }
        return answered(of(r, c), events);
    }

    /** A realloc that cannot even be read (its request does not parse): DENY at once, or UNSUPPORTED when off. */
    public Answer refuse(String job, String tag, String why) {
        return answer(job, tag, enabled ? Answer.Type.DENY : Answer.Type.UNSUPPORTED,
                enabled ? why : "reallocation is off");
    }

    /** RFC 51 "Realloc Cancel": answers the waiting realloc of {@code job} tagged {@code tag} with CANCEL. */
    public Outcome cancel(String job, String tag) {
        for (Iterator<Waiting> it = waiting.iterator(); it.hasNext(); ) {
            Waiting w = it.next();
            if (w.realloc().job().equals(job) && w.realloc().tag().equals(tag)) {
                it.remove();
                return answered(answer(w.realloc(), Answer.Type.CANCEL, "cancelled"), List.of());
            }
        }
        return Outcome.refused("job " + job + " has no waiting realloc tagged " + tag);
    }

    /**
     * The cancel at {@code time}: the time passes first (the events: jobs started, reallocs answered on
     * the way, which may answer the very realloc, so the cancel then finds nothing), then {@link #cancel}.
     * A time before the current one is refused and changes nothing.
     */
    public Outcome cancel(String job, String tag, long time) {
        if (time < cluster.now()) {
            return Outcome.refused("time " + time + " is before the current time " + cluster.now());
        }
        List<Event> events = new ArrayList<>(events(cluster.advance(time)));
        Outcome o = cancel(job, tag);
        events.addAll(o.events());
        return new Outcome(o.ok(), o.error(), o.answer(), events);
    }

    /**
     * RELEASE: the job let go of {@code ids}, which a SUCCESS took away; they are free and may start
     * waiting jobs or answer waiting reallocs (the events). Refused, changing nothing, when any of them was
     * not taken away.
     */
    public Outcome release(String job, Grant ids, long time) {
        Decision d = holdings.release(job, ids, time);
        return d.isRefused() ? Outcome.refused(d.error()) : Outcome.done(Optional.empty(), events(d));
    }

    /**
     * JOB_END: the job's waiting reallocs are answered CANCEL, then everything it holds is freed, pending
     * take-aways included ({@link Cluster#finish}); a waiting job is withdrawn.
     */
    public Outcome finish(String job, long time) {
        List<Event> out = new ArrayList<>();
        if (time >= cluster.now() && cluster.isRunning(job)) {
            for (Iterator<Waiting> it = waiting.iterator(); it.hasNext(); ) {
                Waiting w = it.next();
                if (w.realloc().job().equals(job)) {
                    it.remove();
                    out.add(new Event.Reply(answer(w.realloc(), Answer.Type.CANCEL, "job " + job + " ended")));
                }
            }
        }
        Decision d = cluster.finish(job, time);
        if (d.isRefused()) {
            return Outcome.refused(d.error());
        }
        out.addAll(events(d));
        return Outcome.done(Optional.empty(), out);
    }

    /**
     * Puts a running job back exactly as a journal recorded it: {@code grant} (what it uses) and
     * {@code releasing} (taken away, not yet released). Refused, changing nothing, as {@link Cluster#restore}.
     */
    public Outcome restore(JobSpec job, Grant grant, Grant releasing, long time) {
        Decision d = holdings.restore(job, grant, releasing, time);
        return d.isRefused() ? Outcome.refused(d.error()) : Outcome.done(Optional.empty(), events(d));
    }

    /**
     * What {@code d} (the decision of any operation on the cluster) caused, in order: the jobs it started
     * and the waiting reallocs answered among them.
     */
    public List<Event> events(Decision d) {
        List<Event> out = new ArrayList<>();
        long first = holdings.starts() - d.started().size();
        int s = 0;
        for (Pending p : outbox) {
            for (; s < d.started().size() && first + s < p.afterStarts(); s++) {
                out.add(new Event.Start(d.started().get(s)));
            }
            out.add(new Event.Reply(p.answer()));
        }
        for (; s < d.started().size(); s++) {
            out.add(new Event.Start(d.started().get(s)));
        }
        outbox.clear();
        return out;
    }

    // --- the parts ---

    /** Why {@code r} can never be met, as far as can be told before trying it. */
    private Optional<String> precheck(Realloc r) {
        if (!cluster.isRunning(r.job())) {
            return Optional.of(cluster.isWaiting(r.job()) ? "job " + r.job() + " is not running yet"
                    : "unknown job " + r.job());
        }
        for (Waiting w : waiting) {
            if (w.realloc().job().equals(r.job()) && w.realloc().tag().equals(r.tag())) {
                return Optional.of("job " + r.job() + " has a waiting realloc tagged " + r.tag());
            }
        }
        if (r.add().map(a -> a.resourceRequests().isEmpty()).orElse(false)) {
            return Optional.of("add names no resource map");
        }
        if (r.sub().map(a -> a.resourceRequests().isEmpty()).orElse(false)) {
            return Optional.of("sub names no resource map");
        }
        return Optional.empty();
    }

    /** The waiting reallocs as the queue's passes see them. */
    private List<Claims.Claim> claims() {
        List<Claims.Claim> out = new ArrayList<>(waiting.size());
        for (Waiting w : policy.order(waiting)) {
            out.add(new Claims.Claim() {
                @Override
                public long place() {
                    return w.place();
                }

                @Override
                public void tryNow() {
                    attempt(w);
                }
            });
        }
        return out;
    }

    /** A waiting realloc's turn in a pass: met, never (DENY), its job gone (CANCEL), or it waits on. */
    private void attempt(Waiting w) {
        Realloc r = w.realloc();
        Answer a;
        if (!cluster.isRunning(r.job())) {
            a = answer(r, Answer.Type.CANCEL, "job " + r.job() + " ended");
        } else {
            Change c = holdings.change(r.job(), r.add(), r.sub(), r.ids());
            if (c.kind() == Change.Kind.NOT_YET) {
                return;
            }
            a = of(r, c);
        }
        waiting.remove(w);
        outbox.add(new Pending(holdings.starts(), a));
    }

    private Answer of(Realloc r, Change c) {
        if (c.kind() == Change.Kind.MET) {
            return new Answer(r.job(), r.tag(), nextAllocId++, Answer.Type.SUCCESS, c.added(), c.removed(),
                    c.addedAt(), c.removedAt(), "");
        }
        return answer(r, Answer.Type.DENY, c.why());
    }

    private Answer answer(Realloc r, Answer.Type type, String why) {
        return answer(r.job(), r.tag(), type, why);
    }

    private Answer answer(String job, String tag, Answer.Type type, String why) {
        return new Answer(job, tag, nextAllocId++, type, Grant.NONE, Grant.NONE, Positions.NONE, Positions.NONE, why);
    }

    private static Outcome answered(Answer a, List<Event> events) {
        return Outcome.done(Optional.of(a), events);
    }
}
