// The verbs of an instance's health (docs/health.md): taint and untaint, each told to the core, the
// journal (the admin's, the check's and a failed MIG creation's), the log and the event streams, with the
// jobs holding it.
package rsmap.daemon.health;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.alloc.Cluster;
import rsmap.alloc.Exclusions;
import rsmap.daemon.job.EventHub;
import rsmap.daemon.job.Reallocation;
import rsmap.daemon.records.JournalRecord;
import rsmap.daemon.records.Records;
import rsmap.daemon.state.Access;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.Refusal;
import rsmap.daemon.state.Taint;
import rsmap.device.nvml.MigCard;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.map.ComplexValues;
import rsmap.daemon.state.JobId;

/**
 * Called under the daemon's lock. rsmapd never kills a job for a taint: the jobs holding the instance keep
 * it, and their owners' event streams get {@code taint} (and {@code untaint}) naming them. A change that
 * changes nothing (the same taint again, clearing what is not set) is no event and no record.
 */
public final class Health {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HostState s;
    private final Records records;
    private final EventHub events;
    private final LogBook log;
    private final Access access;
    /** Where the waiting reallocs an untaint lets through are answered. */
    private final Reallocation reallocation;

    public Health(HostState s, Records records, EventHub events, LogBook log, Access access, Reallocation reallocation) {
        this.reallocation = reallocation;
        this.s = s;
        this.records = records;
        this.events = events;
        this.log = log;
        this.access = access;
    }

    /** The instances of {@code map} (this host's, else the global host's) as identifier and holder ("" free). */
    private List<Map.Entry<String, String>> instances(String map) {
        Cluster c = s.cluster();
        List<Map.Entry<String, String>> own = c.instances(s.host()).get(map);
        return own != null ? own : c.instances(Cluster.GLOBAL).getOrDefault(map, List.of());
    }

    /** Refused (REFUSED, one line) unless {@code map} has an instance {@code id}. */
    void check(String map, String id) throws Refusal {
        List<Map.Entry<String, String>> all = instances(map);
        if (all.isEmpty()) {
            throw Refusal.refused("no resource map " + map + " here (maps: "
                    + String.join(", ", s.mapNames()) + ")");
        }
        if (all.stream().noneMatch(e -> e.getKey().equals(id))) {
            throw Refusal.refused(map + " has no instance " + id);
        }
    }

    /**
     * Sets {@code t}. The admin's, the check's and MIG's are journaled first ({@code now}: forced on the spot, for
     * callers outside a command; else with the command's answer). False when it was set already alike.
     */
    public boolean taint(Taint t, boolean now) throws Refusal {
        check(t.map(), t.id());
        Optional<Taint> before = s.health.of(t.map(), t.id(), t.source());
        if (before.isPresent() && before.get().reason().equals(t.reason())) {
            return false;
        }
        journal(new JournalRecord.Health(t, true), t.source(), now);
        s.health.put(t, s.cluster(), s.host()).ifPresent(d -> reallocation.dispatch(s.reallocs().events(d)));
        s.changed();
        List<String> jobs = holders(t.map(), t.id());
        log.note(Log.Level.WARNING, "taint map=" + t.map() + " id=" + t.id() + " source=" + t.source().text()
                + " reason=" + Args.quote(t.reason()) + " jobs=" + jobs);
        publish("taint", t, jobs);
        return true;
    }

    /** Clears {@code source}'s taint of {@code map}/{@code id}; false when it had none. */
    public boolean untaint(String map, String id, Taint.Source source, boolean now) throws Refusal {
        check(map, id);
        Optional<Taint> before = s.health.of(map, id, source);
        if (before.isEmpty()) {
            return false;
        }
        clear(before.get(), now);
        return true;
    }

    /**
     * A slice NVML refused to make on {@code card} ({@code MigHost.Failed}): the card's instances
     * ({@code MigHost#cardInstances}) tainted, source mig, with NVML's error. Journaled and forced here: the
     * start it refuses is answered without the group commit. A taint that cannot be set is logged, not
     * thrown: the refusal stands either way.
     */
    public void creationFailed(MigCard card, String reason) {
        String why = Args.oneLine(reason, Taint.MAX_REASON);
        ComplexValues values = s.cluster().hosts().get(s.host());
        List<Exclusions.Key> on = values == null ? List.of() : s.devices.cardInstances(card, values);
        if (on.isEmpty()) {
            log.note(Log.Level.WARNING, "card " + card.uuid() + ": " + why + " (no instance of it here to taint)");
            return;
        }
        Instant now = Instant.now(); // one time for all: the taints of one failure (HostHealth#alike)
        boolean written = false;
        for (Exclusions.Key k : on) {
            try {
                written |= taint(new Taint(k.map(), k.id(), Taint.Source.MIG, why, now), false);
            } catch (Refusal x) {
                log.note(Log.Level.WARNING, "card " + card.uuid() + ": " + k + " not tainted: " + x.getMessage());
            }
        }
        if (written) {
            records.force();
        }
    }

    /**
     * UNDRAIN's part for a failed MIG creation: clears the mig taint of {@code map}/{@code id} and of every
     * instance the same failure tainted ({@code HostHealth#alike}: its card's others); false when it had none.
     */
    public boolean untaintCreation(String map, String id, boolean now) throws Refusal {
        check(map, id);
        Optional<Taint> t = s.health.of(map, id, Taint.Source.MIG);
        if (t.isEmpty()) {
            return false;
        }
        for (Taint x : s.health.alike(t.get())) {
            clear(x, now); // an instance no longer configured loses its taint all the same
        }
        return true;
    }

    /** Clears {@code before}, which is set: journaled, told to the core, logged and published. */
    private void clear(Taint before, boolean now) throws Refusal {
        String map = before.map();
        String id = before.id();
        Taint.Source source = before.source();
        journal(new JournalRecord.Health(before, false), source, now);
        s.changed();
        // Before the untaint event: a waiting realloc it lets through is answered (and its event sent) first.
        s.health.remove(map, id, source, s.cluster(), s.host()).ifPresent(d -> reallocation.dispatch(s.reallocs().events(d)));
        List<String> jobs = holders(map, id);
        log.note(Log.Level.INFO, "untaint map=" + map + " id=" + id + " source=" + source.text() + " jobs=" + jobs
                + (s.health.shown(map, id).isPresent() ? " still=" + s.health.shown(map, id).get().source().text() : ""));
        publish("untaint", before, jobs);
    }

    private void journal(JournalRecord.Health r, Taint.Source source, boolean now) throws Refusal {
        if (source == Taint.Source.NVML) {
            return; // learnt again from the card after a restart
        }
        if (now) {
            records.writeNow(r);
        } else {
            records.write(r);
        }
    }

    /** The jobs holding any share of {@code map}/{@code id}, in instance order. */
    List<String> holders(String map, String id) {
        Set<String> jobs = new LinkedHashSet<>();
        for (Map.Entry<String, String> e : instances(map)) {
            if (e.getKey().equals(id) && !e.getValue().isEmpty()) {
                jobs.add(e.getValue());
            }
        }
        return new ArrayList<>(jobs);
    }

    /**
     * {@code {"event":"taint","map":"gpu","id":"0","source":"nvml","reason":"Xid 79","since":"...","jobs":["7"],
     * "health":...}}: {@code health} is the instance's health after the change (another source's taint may
     * remain). Root and the admin see every one; a job owner sees those naming a job of theirs.
     */
    private void publish(String kind, Taint t, List<String> jobs) {
        List<Job> holding = jobs.stream().map(JobId::parse).flatMap(Optional::stream).map(s::job).flatMap(Optional::stream)
                .toList(); // the core names its holders by their text (module plugin)
        events.publish(kind, Set.of(t.map()), null, null, () -> {
            ObjectNode diff = JSON.createObjectNode().put("event", kind).put("map", t.map()).put("id", t.id())
                    .put("source", t.source().text()).put("reason", t.reason()).put("since", t.since().toString());
            jobs.forEach(diff.putArray("jobs")::add);
            diff.set("health", s.health.json(t.map(), t.id()));
            return diff;
        }, session -> access.privileged(session.peer()) || holding.stream().anyMatch(j -> access.mayQuery(session.peer(), j)));
    }
}
