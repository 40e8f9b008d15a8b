// What the host's devices show and name, read without changing anything: a job's environment (SGE_HGR_*, the GPU
// variable, its slices' MIG UUIDs), the cards NVML gave, the slices; the read-only side of the seam (HostDevices).
package rsmap.daemon.state;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.alloc.Grant;
import rsmap.device.nvml.Inventory;

/**
 * Read by the state's builder (the exclusion rule), the journal's replay, the views and the health watch; the
 * device seam changes what it reads (the GPUs at RELOAD, the slices through MIG). Under the daemon's lock.
 */
public interface DeviceViews {
    /** A job's environment when it holds {@code grant}: its SGE_HGR_*, and the variable naming its cards. */
    Map<String, String> environment(Grant grant);

    /**
     * The job's environment when it holds {@code held} (and its global part): a map it held before and holds
     * no more shows empty (a realloc, a RELEASE, a replayed change).
     */
    Map<String, String> environment(Job job, Grant held);

    /** {@code instances} with their slices' capability nodes, where they have them. */
    List<rsmap.map.Instance> withCaps(List<rsmap.map.Instance> instances);

    /** The MIG UUID of each slice {@code job} holds (granted or taken away), by place: what its records name. */
    Map<String, String> slices(Job job);

    /** The MIG UUIDs of the slices a grow added to {@code job}, for its ALLOC and {@code alloc} event; null: none. */
    ObjectNode addedSlices(JobId job, Grant added);

    /** NVML's inventory as last read, where gpu_map is built from it. */
    Optional<Inventory> inventory();

    /** The driver and each card, where NVML was read (docs/gpus.md), for QUERY. */
    ObjectNode facts();

    /** The slices on demand: the map of slices, when mig_map is set. */
    Optional<String> migMap();

    /**
     * The slices (docs/gpus.md): each of rsmapd's with its profile, card and MIG UUID, then each an admin made
     * ({@code static}), for QUERY.
     */
    ArrayNode slicesShown();

    /** explain's lines on the slices a request of the map of slices would need (the MIG part's); "" for none. */
    String explainSlices(HostHealth health, rsmap.map.ComplexValues values, rsmap.request.RequestList request,
                         Map<String, List<Map.Entry<String, String>>> holders, java.util.function.UnaryOperator<String> shown);

    /** The gpu_map identifiers of card {@code uuid} in {@code values}, in configured order (the card index). */
    List<String> cardIds(String uuid, rsmap.map.ComplexValues values);

    /** The instances of card {@code card} in {@code values} that a taint of it goes on. */
    List<rsmap.alloc.Exclusions.Key> cardInstances(rsmap.device.nvml.MigCard card, rsmap.map.ComplexValues values);

    /** The card-and-slices exclusions of {@code values} : the core's exclusion rule. */
    rsmap.alloc.Exclusions exclusions(rsmap.map.ComplexValues values);

    /** While the journal is replayed: the MIG UUIDs the records of job {@code id} name. */
    void journaled(JobId id, Map<String, String> slices);

    /** The MIG UUIDs the replayed records of job {@code id} named (start-up's compaction writes them, not mig.json's). */
    Map<String, String> journaledSlices(JobId id);

    /** While the journal is replayed: job {@code id} ended. */
    void journaledEnd(JobId id);

    /** Start-up applied what the records named: forgotten. */
    void journaledApplied();
}
