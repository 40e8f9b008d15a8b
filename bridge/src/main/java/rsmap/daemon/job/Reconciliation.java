// Releasing what jobs that ended without an epilog still hold: by execd's spool, or by the processes the
// job's starter entered.
package rsmap.daemon.job;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import rsmap.daemon.devices.HostDevices;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;
import rsmap.log.Log;
import rsmap.log.LogBook;

/**
 * With {@code execd_spool} set, a job whose {@code active_jobs/<job>.<task>} directory execd has removed
 * is gone; without it, a job all of whose entered processes (checked with their start times against pid
 * reuse) have exited. Reconciliation never frees more than the jobs it positively saw end: a
 * spool it cannot read releases nothing, and says so each time.
 */
public final class Reconciliation {
    private final HostState s;
    private final JobLifecycle lifecycle;
    /** What a grant makes on the host: slices, specs and policies of jobs gone are kept in step. */
    private final HostDevices devices;
    private final LogBook log;

    public Reconciliation(HostState s, HostDevices devices, JobLifecycle lifecycle, LogBook log) {
        this.s = s;
        this.devices = devices;
        this.lifecycle = lifecycle;
        this.log = log;
    }

    /** One pass; called under the daemon's lock. */
    public void run() {
        devices.sweepLeftovers();
        devices.slicesInStep(); // slices rsmapd made that no job holds any more
        Path spool = s.config.execdSpool();
        if (spool != null && !readableDirectory(spool.resolve("active_jobs"))) {
            log.note(Log.Level.ERROR, "reconciliation skipped: " + spool.resolve("active_jobs") + " is not a readable "
                    + "directory; no grant is released until it is");
            devices.specsInStep(); // the held jobs' specs in step all the same
            return;
        }
        Map<JobId, String> gone = new LinkedHashMap<>(); // job -> why; released after the walk over jobs
        for (Job j : s.jobs()) {
            String why = goneReason(j);
            if (why != null) {
                gone.put(j.id(), why);
            }
        }
        for (Map.Entry<JobId, String> g : gone.entrySet()) {
            try {
                lifecycle.end(g.getKey(), "reconciled");
                log.note(Log.Level.WARNING, "released job " + g.getKey() + " (" + g.getValue() + ")");
            } catch (Refusal e) {
                log.note(Log.Level.ERROR, "could not release job " + g.getKey() + ": " + e.getMessage());
            }
        }
        List<JobId> bareGone = new ArrayList<>();
        for (Job j : s.bare.all()) {
            if (goneReason(j) != null) {
                bareGone.add(j.id());
            }
        }
        bareGone.forEach(devices::removePolicy);
        devices.specsInStep(); // specs of jobs gone while rsmapd was away
    }

    private static boolean readableDirectory(Path dir) {
        if (!Files.isDirectory(dir) || !Files.isReadable(dir) || !Files.isExecutable(dir)) {
            return false;
        }
        try (var list = Files.newDirectoryStream(dir)) {
            return list.iterator() != null;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** Why a job is positively gone, or null: a failed look at its spool directory is not "gone". */
    private String goneReason(Job j) {
        Path spool = s.config.execdSpool();
        if (spool != null) {
            String dir = j.id().spoolDir();
            try {
                Files.readAttributes(spool.resolve("active_jobs").resolve(dir), BasicFileAttributes.class);
                return null;
            } catch (NoSuchFileException e) {
                return "its spool directory active_jobs/" + dir + " is gone";
            } catch (IOException e) {
                return null; // cannot tell: keep it
            }
        }
        if (!j.pids().isEmpty() && j.pids().entrySet().stream().noneMatch(e -> Job.alive(e.getKey(), e.getValue()))) {
            return j.pids().size() == 1 ? "its process " + j.pids().keySet().iterator().next() + " has exited"
                    : "its processes " + j.pids().keySet() + " have exited";
        }
        return null;
    }
}
