// The checkpoint of rsmapd's slices made to agree again with the journal and the driver where it lost track
// (mig.json deleted, or put back from an older copy): a running job's slice adopted again, stale entries
// dropped, never a slice destroyed on an entry's word alone (docs/gpus.md, "Crash safety").
package rsmap.daemon.devices;

import java.io.IOException;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import rsmap.daemon.state.Job;
import rsmap.device.nvml.MigCard;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.daemon.state.JobId;

/** Under the daemon's lock, for one pass of {@link MigHost}'s start-up or reconciliation. */
final class MigRepair {
    /** The capability nodes of slice {@code x} of card {@code c} ({@link MigCaps#nodes}). */
    interface Caps {
        List<String> of(MigCard c, MigCard.Slice x) throws IOException;
    }

    private final MigCheckpoint checkpoint;
    private final LogBook log;
    /** Called after the checkpoint changed (QUERY's kept answers go). */
    private final Runnable changed;

    MigRepair(MigCheckpoint checkpoint, LogBook log, Runnable changed) {
        this.checkpoint = checkpoint;
        this.log = log;
        this.changed = changed;
    }

    /**
     * Start-up, before {@link MigHost#reconcile}: the checkpoint made to agree with the journal where it lost track
     * (mig.json deleted, or put back from an older copy). For each place a held job holds that the checkpoint
     * names for no job, for another one, or for the job but not as the slice its journal record names: such an
     * entry is stale and dropped (its gi may be this job's slice now: never destroyed for it); then a place the
     * job holds (granted, or taken away by a realloc and not released yet) is adopted when NVML reports a slice
     * there with the MIG UUID that the job's last journal record names for that place, so that its end (or
     * release) destroys it; a place the record names no slice for (its creation failed) adopts nothing. Only
     * where the job's records name no slice at all (written by an earlier build) is a place of its grant
     * adopted by the UUID the job's environment file names; a taken-away place is then not adopted (it stays,
     * counted as used, until an admin destroys it). A slice there with another UUID stays an admin's. Each
     * case is logged.
     * {@code journaled}: the UUIDs by place the job's last record named; {@code told}: a job's environment
     * file as written (empty: none or unreadable). Returns each job at whose places an entry was adopted or
     * dropped: its environment, made from the checkpoint as it was, is to be made again.
     */
    Set<JobId> adopt(Collection<Job> held, String host, String map, List<MigCard> cards,
                      Function<JobId, Map<String, String>> journaled, Function<JobId, Map<String, String>> told,
                      Caps caps) {
        String key = "SGE_HGR_" + map;
        Set<JobId> touched = new LinkedHashSet<>();
        for (Job job : held) {
            List<String> granted = job.grant().byHost().getOrDefault(host, Map.of()).getOrDefault(map, List.of());
            List<String> all = job.grant().plus(job.releasing()).byHost().getOrDefault(host, Map.of())
                    .getOrDefault(map, List.of());
            Map<String, String> named = journaled.apply(job.id()); // empty: records of an earlier build
            String name = job.id().toString(); // as mig.json names it
            Map<String, String> file = null;
            for (String id : all) {
                Optional<MigSlot> slot = MigSlot.parse(id);
                if (slot.isEmpty()) {
                    continue;
                }
                Optional<MigCheckpoint.Entry> entry = checkpoint.of(slot.get());
                String uuid = named.get(id); // "": its record says no slice was made there
                if (entry.isPresent() && entry.get().job().equals(name) && (uuid == null
                        || entry.get().state().equals("created") && entry.get().uuid().equals(uuid)
                        || entry.get().state().equals("creating") && uuid.isEmpty())) {
                    // the job's own entry, as its record says (or as an earlier build's cannot say); an intent
                    // whose creation failed stays for reconciliation to look for a slice at its place
                    continue;
                }
                if (entry.isPresent()) {
                    if (!dropStale(entry.get(), name, uuid)) {
                        continue;
                    }
                    touched.add(job.id()); // its environment may name the dropped entry's UUID
                }
                if (!named.isEmpty()) {
                    if (uuid == null || uuid.isEmpty()) {
                        log.note(Log.Level.WARNING, "job " + job.id() + " holds place " + slot.get() + ", where its"
                                + " journal record names no slice (its creation failed): nothing there is adopted");
                    } else if (adopt(name, slot.get(), cards, caps, List.of(uuid), "its journal record")) {
                        touched.add(job.id());
                    }
                    continue;
                }
                if (!granted.contains(id)) {
                    log.note(Log.Level.WARNING, "job " + job.id() + " holds slice " + slot.get() + ", which a realloc"
                            + " took away and neither mig.json nor its journal record names (written by an earlier"
                            + " build): not adopted (its UUID is no longer in the job's environment file); the slice"
                            + " stays, counted as used, until an admin destroys it");
                    continue;
                }
                if (file == null) {
                    file = told.apply(job.id());
                }
                if (adopt(name, slot.get(), cards, caps, file.isEmpty() ? null
                        : List.of(file.getOrDefault(key, "").strip().split(" +")), "its environment file")) {
                    touched.add(job.id());
                }
            }
        }
        return touched;
    }

    /**
     * A stale entry at a place {@code job} holds, dropped without destroying anything: another job's, or the job's
     * own where it is not the slice its journal record names ({@code named}: that record's UUID, "" for none).
     */
    private boolean dropStale(MigCheckpoint.Entry stale, String job, String named) {
        String what = "mig.json named " + (stale.job().equals(job) ? "job " + job + "'s slice " + (stale.uuid().isEmpty()
                ? "(" + stale.state() + ")" : stale.uuid()) + ", its journal record " + (named.isEmpty() ? "no slice"
                : named) : "job " + stale.job() + " (" + stale.uuid() + "), which holds nothing; job " + job
                + " holds the place");
        try {
            checkpoint.remove(stale.slot());
            changed.run();
        } catch (IOException e) {
            log.note(Log.Level.WARNING, "slice " + stale.slot() + ": " + what + "; the stale entry cannot be dropped: "
                    + e.getMessage());
            return false;
        }
        log.note(Log.Level.WARNING, "slice " + stale.slot() + ": " + what + ": the stale entry is dropped, nothing"
                + " destroyed");
        return true;
    }

    /**
     * {@code told}: the MIG UUIDs that {@code source} (the job's journal record, or its environment file) names;
     * null when the file cannot be read.
     */
    private boolean adopt(String job, MigSlot slot, List<MigCard> cards, Caps caps, List<String> told, String source) {
        Optional<MigCard.Slice> found = MigMap.slice(cards, slot);
        if (found.isEmpty() || told == null || found.get().uuid().filter(told::contains).isEmpty()) {
            String why = found.isEmpty() ? "NVML reports no slice there"
                    : told == null ? source + " cannot be read to confirm NVML's " + found.get().uuid().orElse("")
                    : "NVML reports one with a UUID the job was not given (" + found.get().uuid().orElse("none") + ")";
            log.note(Log.Level.WARNING, "job " + job + " holds slice " + slot + ", which mig.json does not name: " + why
                    + "; not adopted" + (found.isEmpty() ? "" : ", left as an admin's"));
            return false;
        }
        MigCard c = MigMap.card(cards, slot.card()).orElseThrow();
        MigCard.Slice s = found.get();
        List<String> nodes = List.of();
        try {
            nodes = caps.of(c, s);
        } catch (IOException e) {
            log.note(Log.Level.WARNING, "slice " + slot + " of job " + job + ": " + e.getMessage());
        }
        try {
            checkpoint.put(new MigCheckpoint.Entry(job, slot, c.uuid(), "created", s.gi(), s.ci().orElse(0),
                    s.uuid().orElse(""), nodes));
            changed.run();
        } catch (IOException e) {
            log.note(Log.Level.WARNING, "slice " + slot + " of job " + job + " cannot be written to mig.json: "
                    + e.getMessage());
            return false;
        }
        log.note(Log.Level.WARNING, "job " + job + ": slice " + slot + " (" + s.uuid().orElse("") + ") was missing "
                + "from mig.json; adopted again from the job's grant and " + source);
        return true;
    }

    /**
     * Whether the slice of a created entry is what NVML reports at its gi (its UUID, or, with no compute
     * instance left, its place): an entry from an older copy of mig.json may name a gi that NVML gave another
     * slice since (an admin's, or a running job's). An entry whose gi holds another slice, or nothing, is
     * dropped without destroying anything; false then.
     */
    boolean stillThere(MigCheckpoint.Entry e, List<MigCard> now) {
        if (e.gi() < 0 || e.uuid().isEmpty()) {
            return true; // an intent: found by its place (destroySlot)
        }
        Optional<MigCard.Slice> at = now.stream().filter(c -> c.uuid().equals(e.card())).flatMap(c -> c.slices().stream())
                .filter(x -> x.gi() == e.gi()).findFirst();
        if (at.isPresent() && (at.get().uuid().filter(e.uuid()::equals).isPresent()
                || at.get().uuid().isEmpty() && MigMap.at(at.get(), e.slot()))) {
            return true; // its slice, or what a stop halfway through its destruction left of it at its place
        }
        try {
            checkpoint.remove(e.slot());
            changed.run();
            log.note(Log.Level.WARNING, "slice " + e.slot() + " of job " + e.job() + " (" + e.uuid() + ", gi " + e.gi()
                    + "): NVML reports " + at.map(x -> "another slice (" + x.uuid().orElse("no UUID") + ")").orElse("none")
                    + " at that gi; the entry is dropped, nothing destroyed");
        } catch (IOException x) {
            log.note(Log.Level.WARNING, "slice " + e.slot() + ": its stale entry cannot be dropped: " + x.getMessage());
        }
        return false;
    }
}
