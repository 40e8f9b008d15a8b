// The MIG UUIDs the journal's records name for each held job's slices, as start-up replays them: what it adopts
// a slice again by when mig.json lost track, and what its compaction writes again (docs/gpus.md, "Crash safety").
package rsmap.daemon.devices;

import java.util.HashMap;
import java.util.Map;
import rsmap.daemon.state.JobId;

/** Start-up only: filled by {@code Recovery}, read by {@link MigHost#adopt} and the compaction, then cleared. */
final class JournaledSlices {
    private final Map<JobId, Map<String, String>> byJob = new HashMap<>();

    /** Job {@code id}'s last record named {@code slices} (place to MIG UUID, "" for none; empty: no field). */
    void replay(JobId id, Map<String, String> slices) {
        if (slices.isEmpty()) {
            byJob.remove(id);
        } else {
            byJob.put(id, Map.copyOf(slices));
        }
    }

    /** Job {@code id} ended. */
    void forget(JobId id) {
        byJob.remove(id);
    }

    /** What job {@code id}'s records named (empty when none). */
    Map<String, String> of(JobId id) {
        return byJob.getOrDefault(id, Map.of());
    }

    /** Start-up made mig.json agree with the journal: from here on mig.json says what the records name. */
    void applied() {
        byJob.clear();
    }
}
