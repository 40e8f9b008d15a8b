// Start-up from the journal: every record replayed into the state, the file's configuration applied
// where it changed, the journal compacted to what is held.
package rsmap.daemon.job;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.daemon.records.JournalRecord;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.Refusal;
import rsmap.journal.Journal;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.realloc.Outcome;
import rsmap.realloc.Reallocs;

/**
 * The journal keeps grants, not decisions: start-up restores each running job's exact grant under the
 * configuration generation it was made in, and no decision is made again. A record whose checksum holds
 * but whose content does not make sense (written by hand, or by a newer release) stops the daemon naming
 * the record: guessing would free or double a grant.
 */
public final class Recovery {
    private Recovery() {
    }

    /** Replays {@code journal} into {@code s}, then the file's configuration; compacts where it is longer than the state. */
    public static void recover(HostState s, Journal journal, Path file, Generations generations, LogBook log)
            throws IOException, ParseException {
        recover(s, journal, file, generations, log, 0);
    }

    /**
     * The same for an authority that took its lease at {@code epoch} (0: a host): a record of an older epoch
     * after one of a newer epoch is refused, and the journal is always compacted, stamped with {@code epoch},
     * into a new file, so that a former holder still writing writes into a file no one reads.
     */
    public static void recover(HostState s, Journal journal, Path file, Generations generations, LogBook log, long epoch)
            throws IOException, ParseException {
        List<String> records = journal.replayed();
        long newest = 0;
        int refused = 0;
        for (int i = 0; i < records.size(); i++) {
            try {
                com.fasterxml.jackson.databind.JsonNode record = JournalRecord.tree(records.get(i)); // read once
                long e = JournalRecord.epoch(record);
                if (e < newest) {
                    refused++;
                    log.note(Log.Level.ERROR, file + ": record " + (i + 1) + " is of epoch " + e + " after one of epoch "
                            + newest + ": written by an authority that had lost its lease; not replayed");
                    continue;
                }
                newest = e;
                apply(s, JournalRecord.parse(record));
            } catch (IOException | ParseException | RuntimeException e) {
                String why = e instanceof ParseException p ? p.getMessage()
                        : e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
                throw new IOException(file + ": record " + (i + 1) + ": " + Args.oneLine(why, 300)
                        + "; rsmapd will not guess which grants are held", e);
            }
        }
        String fileHost = s.config.complexValues();
        String fileGlobal = s.config.globalComplexValues();
        boolean reconfigured = false;
        if (s.generation() == 0) {
            Cluster first = s.build(fileHost, fileGlobal);
            s.install(first, s.reallocsOver(first));
            s.configured(1, fileHost, fileGlobal);
        } else if (!fileHost.equals(s.hostValues()) || !fileGlobal.equals(s.globalValues())) {
            try {
                generations.reconfigure(fileHost, fileGlobal);
                reconfigured = true; // the journal's earlier configuration is superseded
                log.note(Log.Level.INFO, "configuration changed since the last run: now generation " + s.generation());
            } catch (Refusal e) {
                log.note(Log.Level.WARNING, "keeping configuration generation " + s.generation() + " of the journal: "
                        + e.getMessage());
            }
        }
        s.reallocs().continueAfter(s.lastAllocId());
        // Compaction: only when the journal holds more than one configuration and the held grants (one
        // record each); any end, enter, change or earlier configuration makes it longer.
        if (records.size() != 1 + s.jobs().size() + s.jobGroups.size() + s.health.persistent().size() || reconfigured
                || epoch > 0 || refused > 0) {
            List<String> snapshot = new ArrayList<>();
            snapshot(s).forEach(line -> snapshot.add(JournalRecord.stamped(line, epoch)));
            journal.compact(snapshot);
        }
    }

    private static void apply(HostState s, JournalRecord record) throws IOException, ParseException {
        if (record instanceof JournalRecord.Configured c) {
            s.configured(c.generation(), c.complexValues(), c.globalComplexValues());
            s.allocIdsUpTo(c.allocId());
            Cluster next = s.build(s.hostValues(), s.globalValues());
            Reallocs r = s.reallocsOver(next);
            Optional<String> lost = Generations.restoreAll(s, r);
            if (lost.isPresent()) {
                throw new IOException("generation " + s.generation() + " drops a grant: " + lost.get());
            }
            s.install(next, r);
        } else if (record instanceof JournalRecord.Started r) {
            if (s.cluster() == null) {
                throw new IOException("a grant before any configuration record");
            }
            if (s.holds(r.job())) {
                throw new IOException("job " + r.job() + " is granted twice");
            }
            boolean pending = r.remote().equals(JournalRecord.PENDING);
            Job j = new Job(r.job(), r.user(), r.request(), r.slots(), r.grant(), r.releasing(),
                    pending ? rsmap.alloc.Grant.NONE : r.remote(), Map.of(), r.pids());
            if (pending) {
                s.pending(j.id());
            } else {
                s.confirmed(j.id());
            }
            s.prepare(s.cluster(), j.id());
            Outcome o = s.reallocs().restore(s.spec(j.id(), j.request(), j.slots()), r.grant(), r.releasing(), 0);
            if (!o.ok()) {
                throw new IOException("job " + j.id() + " cannot be restored: " + o.error());
            }
            s.replay(j.withEnv(s.devices.environment(r.grant().plus(j.remote()))));
            s.devices.journaled(j.id(), r.slices());
        } else if (record instanceof JournalRecord.Remote rr) {
            Job j = s.job(rr.job()).orElse(null);
            if (j != null) {
                s.confirmed(rr.job());
                s.replay(j.withRemote(rr.remote(), s.devices.environment(j.grant().plus(rr.remote()))));
            }
        } else if (record instanceof JournalRecord.Changed c) {
            // What a realloc or a release left the job: it is put back exactly so, no choice made again.
            Job j = s.job(c.job()).orElse(null);
            if (j == null) {
                throw new IOException("a change of job " + c.job() + ", which holds nothing");
            }
            s.allocIdsUpTo(c.allocId());
            s.cluster().finish(j.id().toString(), 0);
            Outcome o = s.reallocs().restore(s.spec(j.id(), j.request(), j.slots()), c.grant(), c.releasing(), 0);
            if (!o.ok()) {
                throw new IOException("job " + j.id() + " cannot be restored as changed: " + o.error());
            }
            s.replay(j.holding(c.grant(), c.releasing(), s.devices.environment(j, c.grant())));
            s.devices.journaled(j.id(), c.slices());
        } else if (record instanceof JournalRecord.AllocIds ids) {
            s.allocIdsUpTo(ids.upTo());
        } else if (record instanceof JournalRecord.Entered e) {
            Job j = s.job(e.job()).orElse(null);
            if (j != null) {
                s.replay(j.withPid(e.pid(), e.start().orElse(null)));
            }
        } else if (record instanceof JournalRecord.Keyed k) {
            s.jobGroups.replay(k.job(), k.keys(), k.hosts());
        } else if (record instanceof JournalRecord.Health h) {
            if (h.tainted()) {
                s.health.put(h.taint(), s.cluster(), s.host());
            } else {
                s.health.remove(h.taint().map(), h.taint().id(), h.taint().source(), s.cluster(), s.host());
            }
        } else if (record instanceof JournalRecord.Ended e) {
            s.confirmed(e.job());
            if (s.replayEnd(e.job())) {
                s.cluster().finish(e.job().toString(), 0);
            }
        }
    }

    /** The journal's content for the current state: the configuration, every held grant, every job's groups. */
    static List<String> snapshot(HostState s) {
        List<String> out = new ArrayList<>();
        out.add(new JournalRecord.Configured(s.generation(), s.hostValues(), s.globalValues(),
                Math.max(s.lastAllocId(), s.reallocs().lastAllocId())).line());
        for (Job j : s.jobs()) {
            Map<String, String> slices = s.devices.journaledSlices(j.id()); // what the records said, not what mig.json says
            out.add((s.isPending(j.id()) ? JournalRecord.Started.pending(j, slices)
                    : JournalRecord.Started.of(j, slices)).line());
        }
        s.jobGroups.all().forEach((job, held) -> out.add(JournalRecord.Keyed.of(job, held).line()));
        s.health.persistent().forEach(t -> out.add(new JournalRecord.Health(t, true).line()));
        return out;
    }
}
