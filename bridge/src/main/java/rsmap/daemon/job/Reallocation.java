// Dynamic reallocation on this host (Flux RFC 51): REALLOC, RELEASE and REALLOC_CANCEL, and
// what a decision does here - journal, device policy, environment file, events, the open command's answer.
package rsmap.daemon.job;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import rsmap.alloc.Grant;
import rsmap.daemon.devices.HostDevices;
import rsmap.daemon.records.JournalRecord;
import rsmap.daemon.records.Records;
import rsmap.daemon.state.Access;
import rsmap.daemon.state.GrantJson;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.Refusal;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.realloc.Answer;
import rsmap.realloc.Event;
import rsmap.realloc.Outcome;
import rsmap.realloc.Realloc;
import rsmap.realloc.Reallocs;
import rsmap.realloc.Waiting;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.daemon.state.JobId;

/**
 * The core ({@link Reallocs}) decides; this room applies. A SUCCESS is in the journal before it is
 * answered (what the job uses and what it is to give back), then the job's device policy widens by what
 * was added (what was taken away stays in it until RELEASE), its environment file is rewritten and the
 * RFC 21 events go out ({@code alloc}, {@code resource-update}; on RELEASE {@code release} and {@code
 * free}). A realloc that waits keeps its REALLOC command open: its ALLOC and OK come when it is decided,
 * and the connection closing cancels it. Called under the daemon's lock.
 */
public final class Reallocation {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How many alloc ids one {@link JournalRecord.AllocIds} record makes good for. */
    public static final int ID_BLOCK = 1024;

    private final HostState s;
    private final Records journal;
    /** What a change of the grant makes on this host: slices, environment file, spec, policy (the one seam). */
    private final HostDevices devices;
    private final EventHub events;
    private final LogBook log;
    private final Access access;
    /** How far each job may grow (realloc_max_grow). */
    private final GrowthLimit growth = new GrowthLimit();
    /** REALLOC commands left open by a waiting realloc, by job and tag. */
    private final Map<Key, Open> open = new LinkedHashMap<>();

    private record Key(JobId job, String tag) {
    }

    private record Open(Session session, long tid) {
    }

    public Reallocation(HostState s, HostDevices devices, Records journal, EventHub events, LogBook log, Access access) {
        this.s = s;
        this.journal = journal;
        this.devices = devices;
        this.events = events;
        this.log = log;
        this.access = access;
    }

    /** Refuses {@code peer} a job it neither owns nor administers; a job unknown here passes (DENY says so). */
    public void mayChange(JobId job, Session.Peer peer, Code code) throws Refusal {
        Job j = s.job(job).orElse(null);
        if (j != null && !access.mayQuery(peer, j)) {
            throw Refusal.denied(code + " of job " + job + " is for its owner '" + j.user()
                    + "', root or the admin user, not '" + peer.user() + "'");
        }
    }

    /** REALLOC: its ALLOC now, or nothing and the command left open until it is decided. */
    public List<Frame> realloc(long tid, Session session, ReallocArgs.Read read, JobId job, String tag)
            throws Refusal {
        String name = job.toString(); // as the core names it
        if (read.realloc().isEmpty()) {
            Answer a = s.reallocs().refuse(name, tag, read.refusal());
            log.note(Log.Level.INFO, "job " + job + ": realloc " + tag + " " + a.type() + ": " + a.error());
            return List.of(alloc(tid, job, idsOnDisk(a)));
        }
        if (!s.holds(job) && s.bare.of(job).isPresent()) {
            // The core knows only jobs holding something here: a job that asked for no map has no request
            // whose rules an addition could follow.
            Answer a = s.reallocs().refuse(name, tag, "job " + job + " holds nothing on " + s.host()
                    + " (it asked for no resource map here): it cannot grow");
            return List.of(alloc(tid, job, idsOnDisk(a)));
        }
        Realloc r = read.realloc().get();
        growth.retain(s.jobIds());
        Optional<String> over = s.holds(job)
                ? growth.refusal(s.job(job).orElse(null), r, s.config.reallocMaxGrow(), s.host()) : Optional.empty();
        if (over.isPresent()) {
            Answer a = s.reallocs().refuse(name, tag, over.get());
            log.note(Log.Level.INFO, "job " + job + ": realloc " + tag + " " + a.type() + ": " + a.error());
            return List.of(alloc(tid, job, idsOnDisk(a)));
        }
        Key key = new Key(job, tag);
        if (open.containsKey(key)) {
            Answer a = s.reallocs().refuse(name, tag, "job " + job + " has a waiting realloc tagged " + tag);
            return List.of(alloc(tid, job, idsOnDisk(a)));
        }
        Outcome o = s.reallocs().realloc(r, s.cluster().now());
        List<Frame> out = new ArrayList<>();
        if (o.answer().isPresent()) {
            out.add(alloc(tid, job, idsOnDisk(applied(job, o.answer().get()))));
        } else {
            open.put(key, new Open(session, tid));
            session.keepOpen();
            log.note(Log.Level.INFO, "job " + job + ": realloc " + tag + " waits (" + describe(r) + ")");
        }
        dispatch(o.events());
        return out;
    }

    /** REALLOC_CANCEL: the waiting realloc's CANCEL, to its own command and to this one. */
    public List<Frame> cancel(long tid, JobId job, String tag) throws Refusal {
        Outcome o = s.reallocs().cancel(job.toString(), tag);
        if (!o.ok()) {
            throw Refusal.refused(o.error());
        }
        Answer a = o.answer().orElseThrow();
        answerOpen(job, a);
        log.note(Log.Level.INFO, "job " + job + ": realloc " + tag + " cancelled");
        return List.of(alloc(tid, job, idsOnDisk(a)));
    }

    /**
     * RELEASE: the job let go of {@code ids} (all it was told to give back when empty). Refused, changing
     * nothing, when one of them was not taken away or a process of the job still holds one of their
     * devices open; else the policy narrows, the journal records it, the instances are free, and what
     * waited for them is answered.
     */
    public List<Frame> release(long tid, JobId id, Optional<Grant> which) throws Refusal {
        Job job = s.job(id).orElse(null);
        if (job == null) {
            throw Refusal.refused("job " + id + " holds nothing on " + s.host());
        }
        Grant ids = which.orElse(job.releasing());
        if (ids.isEmpty()) {
            throw Refusal.refused("job " + id + " has nothing to release: no realloc took anything away");
        }
        Optional<String> wrong = notTakenAway(job, ids);
        if (wrong.isPresent()) {
            throw Refusal.refused(wrong.get());
        }
        Grant left = job.releasing().minus(ids);
        devices.narrow(job, ids, job.grant().plus(left));
        Outcome o = s.reallocs().release(id.toString(), ids, s.cluster().now());
        if (!o.ok()) {
            devices.widenBack(job);
            throw Refusal.refused(o.error());
        }
        Job now = job.holding(job.grant(), left, job.env());
        journaled(new JournalRecord.Changed(id, "release", 0, now.grant(), now.releasing(), s.devices.slices(now)));
        devices.hold(now);
        devices.released(now); // its slices destroyed after the narrowing
        log.note(Log.Level.INFO, "job " + id + " released " + ids.byHost());
        publish("release", now, () -> event("release", now).<ObjectNode>set("ids", GrantJson.of(ids)));
        publish("free", now, () -> event("free", now).<ObjectNode>set("ids", GrantJson.of(ids)));
        dispatch(o.events());
        return List.of(JobAnswer.of(tid, now));
    }

    /** A session ended: its waiting reallocs are cancelled (nobody is left to answer). */
    public void closed(Session session) {
        for (Iterator<Map.Entry<Key, Open>> it = open.entrySet().iterator(); it.hasNext();) {
            Map.Entry<Key, Open> e = it.next();
            if (e.getValue().session() == session) {
                it.remove();
                s.reallocs().cancel(e.getKey().job().toString(), e.getKey().tag());
                log.note(Log.Level.INFO, "job " + e.getKey().job() + ": realloc " + e.getKey().tag()
                        + " cancelled: its connection closed");
            }
        }
    }

    /**
     * What an operation on the core caused: each realloc answered in it is applied and sent to its open
     * command. (A host daemon queues no job: JOB_START grants now or refuses.)
     */
    public void dispatch(List<Event> caused) {
        for (Event e : caused) {
            if (e.kind() == Event.Kind.REPLY) {
                answered(((Event.Reply) e).answer());
            }
        }
    }

    /**
     * A new core (RELOAD): the waiting reallocs of {@code from} wait in {@code to} in their order, or are
     * answered now where the new configuration decides them.
     */
    void carry(Reallocs from, Reallocs to) {
        List<Answer> answered = new ArrayList<>();
        for (Waiting w : from.waiting()) {
            Outcome o = to.realloc(w.realloc(), to.cluster().now());
            o.answer().ifPresent(answered::add);
            o.events().forEach(e -> {
                if (e.kind() == Event.Kind.REPLY) {
                    answered.add(((Event.Reply) e).answer());
                }
            });
        }
        answered.forEach(this::answered);
    }

    // --- the parts ---

    /** A SUCCESS changes the job here before it is sent: journal, policy, environment file, events. */
    /** A waiting realloc the core answered: applied, and sent to its open command. */
    private void answered(Answer a) {
        JobId id = idOf(a);
        answerOpen(id, applied(id, a));
    }

    private Answer applied(JobId id, Answer a) {
        if (a.type() != Answer.Type.SUCCESS) {
            log.note(Log.Level.INFO, "job " + a.job() + ": realloc " + a.tag() + " " + a.type() + ": " + a.error());
            return a;
        }
        Job job = s.job(id).orElse(null);
        Grant held = s.cluster().grantOf(a.job()).orElse(Grant.NONE);
        Grant releasing = s.reallocs().releasingOf(a.job());
        devices.grown(id, a.added(), a.tag()); // the added slices, made before the job is told
        Job now = job.holding(held, releasing, s.devices.environment(job, held));
        journaled(new JournalRecord.Changed(id, "realloc", a.allocId(), held, releasing, s.devices.slices(now)));
        devices.hold(now); // its environment file and spec follow
        devices.widened(now, a.added());
        log.note(Log.Level.INFO, "job " + a.job() + ": realloc " + a.tag() + " SUCCESS alloc_id " + a.allocId()
                + (a.added().isEmpty() ? "" : " added " + a.added().byHost())
                + (a.removed().isEmpty() ? "" : " took away " + a.removed().byHost()));
        if (!a.added().isEmpty()) {
            publish("alloc", now, () -> {
                ObjectNode n = event("alloc", now).put("alloc_id", a.allocId()).set("added", GrantJson.of(a.added()));
                var slices = s.devices.addedSlices(id, a.added()); // the added slices' MIG UUIDs
                return slices == null ? n : n.set("mig", slices);
            });
        }
        publish("resource-update", now, () -> {
            ObjectNode n = event("resource-update", now).put("alloc_id", a.allocId());
            n.set("added", GrantJson.of(a.added()));
            n.set("removed", GrantJson.of(a.removed()));
            n.set("grants", GrantJson.of(now.grant()));
            n.set("releasing", GrantJson.of(now.releasing()));
            return n;
        });
        return a;
    }

    /**
     * {@code a}, once a restart is sure to go on above its alloc id: before a client sees an id past the
     * block on disk, the next block is journaled (answers are not all journaled).
     */
    private Answer idsOnDisk(Answer a) {
        if (a.allocId() > s.lastAllocId()) {
            journaled(new JournalRecord.AllocIds(a.allocId() + ID_BLOCK - 1));
            s.allocIdsUpTo(a.allocId() + ID_BLOCK - 1);
        }
        return a;
    }

    /** Sends {@code a} to its open REALLOC command, then closes that command with OK. */
    private void answerOpen(JobId id, Answer a) {
        Open o = open.remove(new Key(id, a.tag()));
        if (o == null || o.session().closed()) {
            return;
        }
        o.session().post(alloc(o.tid(), id, idsOnDisk(a)), true);
        o.session().post(Session.ok(o.tid()), true);
    }

    /** The job a core's answer is about: the core names jobs by their text (module plugin). */
    private static JobId idOf(Answer a) {
        return JobId.parse(a.job()).orElseThrow();
    }

    private Frame alloc(long tid, JobId id, Answer a) {
        return AllocFrame.of(tid, id, a, s);
    }

    /**
     * A change the core made is on disk before anything else happens ({@link Records#writeNow}: it cannot
     * be undone, so a journal that fails stops rsmapd; the client never saw the answer).
     */
    private void journaled(JournalRecord r) {
        journal.writeNow(r);
    }

    /** Why {@code ids} are not all taken away from {@code job} (counting repeats); empty when they are. */
    private static Optional<String> notTakenAway(Job job, Grant ids) {
        for (var h : ids.byHost().entrySet()) {
            for (var m : h.getValue().entrySet()) {
                List<String> pending = new ArrayList<>(job.releasing().byHost().getOrDefault(h.getKey(), Map.of())
                        .getOrDefault(m.getKey(), List.of()));
                for (String id : m.getValue()) {
                    if (!pending.remove(id)) {
                        return Optional.of(h.getKey() + "/" + m.getKey() + " " + id + " was not taken away from job "
                                + job.id() + " (to give back: " + job.releasing().byHost() + ")");
                    }
                }
            }
        }
        return Optional.empty();
    }

    private ObjectNode event(String kind, Job job) {
        return JSON.createObjectNode().put("event", kind).put("job", job.id().toString()).put("user", job.user());
    }

    private void publish(String kind, Job job, Supplier<ObjectNode> diff) {
        events.publish(kind, job.maps(), job.id(), job.user(), diff, stream -> access.mayQuery(stream.peer(), job));
    }

    private static String describe(Realloc r) {
        List<String> parts = new ArrayList<>();
        r.add().ifPresent(a -> parts.add("add " + a));
        r.sub().ifPresent(x -> parts.add("sub " + x));
        if (!r.ids().isEmpty()) {
            parts.add("ids " + r.ids().byHost());
        }
        return String.join(", ", parts);
    }
}
