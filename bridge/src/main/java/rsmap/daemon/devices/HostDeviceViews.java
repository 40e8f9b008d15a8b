// The host's device views over its parts: a job's environment named by its GPUs and slices, the cards NVML gave,
// the slices mig.json and NVML know, what the journal's records named at start-up (DeviceViews, HostDevices).
package rsmap.daemon.devices;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.alloc.Grant;
import rsmap.daemon.state.DeviceViews;
import rsmap.daemon.state.HostHealth;
import rsmap.daemon.state.Job;
import rsmap.device.nvml.Inventory;
import rsmap.daemon.state.JobId;

/** Under the daemon's lock; {@link HostDevices} changes what it reads (the GPUs at RELOAD, the slices through MIG). */
public final class HostDeviceViews implements DeviceViews {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String host;
    /** The host's GPUs (NVML, gpu_map): set at start and by each accepted RELOAD ({@link HostDevices#reloaded}). */
    private GpuHost gpus;
    private final MigHost mig;
    /** The MIG UUIDs of held jobs' slices as the replayed records named them (start-up only). */
    private final JournaledSlices journaled = new JournaledSlices();

    public HostDeviceViews(String host, GpuHost gpus, MigHost mig) {
        this.host = host;
        this.gpus = gpus;
        this.mig = mig;
    }

    /** An authority's: no GPU, no slice. */
    public static HostDeviceViews none(String host) {
        return new HostDeviceViews(host, GpuHost.NONE, MigHost.none());
    }

    /** RELOAD read the GPUs again. */
    void gpus(GpuHost read) {
        gpus = read;
    }

    /** A job's environment when it holds {@code grant}: its SGE_HGR_*, and the variable naming its cards. */
    @Override
    public Map<String, String> environment(Grant grant) {
        return mig.names.environment(gpus.environment(grant.environment(host)));
    }

    /**
     * The job's environment when it holds {@code held} (and its global part): a map it held before and holds
     * no more shows empty (a realloc, a RELEASE, a replayed change).
     */
    @Override
    public Map<String, String> environment(Job job, Grant held) {
        Map<String, String> env = new LinkedHashMap<>(environment(held.plus(job.remote())));
        Map<String, String> before = new LinkedHashMap<>(environment(job.grant().plus(job.releasing())));
        before.putAll(job.env());
        before.keySet().forEach(k -> env.putIfAbsent(k, ""));
        return env;
    }

    /** {@code instances} with their slices' capability nodes, where they have them. */
    @Override
    public List<rsmap.map.Instance> withCaps(List<rsmap.map.Instance> instances) {
        return mig.names.withCaps(instances);
    }

    /** The MIG UUID of each slice {@code job} holds (granted or taken away), by place: what its records name. */
    @Override
    public Map<String, String> slices(Job job) {
        return mig.names.slices(job, host);
    }

    /** The MIG UUIDs of the slices a grow added to {@code job}, for its ALLOC and {@code alloc} event; null: none. */
    @Override
    public ObjectNode addedSlices(JobId job, Grant added) {
        return mig.names.added(job, added, host);
    }

    /** NVML's inventory as last read, where gpu_map is built from it. */
    @Override
    public Optional<Inventory> inventory() {
        return gpus.inventory();
    }

    /** The driver and each card, where NVML was read (docs/gpus.md), for QUERY. */
    @Override
    public ObjectNode facts() {
        return gpus.facts();
    }

    /** The slices on demand: the map of slices, when mig_map is set. */
    @Override
    public Optional<String> migMap() {
        return mig.map();
    }

    /**
     * The slices (docs/gpus.md): each of rsmapd's with its profile, card and MIG UUID, then each an admin made
     * ({@code static}), for QUERY.
     */
    @Override
    public ArrayNode slicesShown() {
        ArrayNode list = JSON.createArrayNode();
        for (MigCheckpoint.Entry e : mig.slices()) {
            list.addObject().put("id", e.slot().toString()).put("profile", e.slot().profile()).put("card", e.card())
                    .put("uuid", e.uuid()).put("job", e.job()).put("gi", e.gi()).put("ci", e.ci()).put("state", e.state());
        }
        for (rsmap.device.nvml.MigCard c : mig.cards()) {
            for (rsmap.device.nvml.MigCard.Slice x : c.slices()) {
                if (!mig.ours(c, x)) {
                    list.addObject().putNull("id").put("profile", x.profile()).put("card", c.uuid())
                            .put("uuid", x.uuid().orElse("")).put("job", "").put("gi", x.gi()).put("ci", x.ci().orElse(-1))
                            .put("state", "static");
                }
            }
        }
        return list;
    }

    /** explain's lines on the slices a request of the map of slices would need ({@link MigExplain}); "" for none. */
    @Override
    public String explainSlices(HostHealth health, rsmap.map.ComplexValues values, rsmap.request.RequestList request,
                         Map<String, List<Map.Entry<String, String>>> holders, java.util.function.UnaryOperator<String> shown) {
        return MigExplain.text(mig, health, values, request, holders, shown);
    }

    /** The instances of card {@code card} in {@code values} that a taint of it goes on ({@link MigHost#cardInstances}). */
    @Override
    public List<String> cardIds(String uuid, rsmap.map.ComplexValues values) {
        return gpus.cards(values).ids(uuid);
    }

    @Override
    public List<rsmap.alloc.Exclusions.Key> cardInstances(rsmap.device.nvml.MigCard card, rsmap.map.ComplexValues values) {
        return mig.cardInstances(card, values);
    }

    /** The card-and-slices exclusions of {@code values} ({@link MigExclusions}): the core's exclusion rule. */
    @Override
    public rsmap.alloc.Exclusions exclusions(rsmap.map.ComplexValues values) {
        return mig.exclusions(values);
    }

    // --- start-up: what the journal's records named ---

    /** While the journal is replayed: the MIG UUIDs the records of job {@code id} name. */
    @Override
    public void journaled(JobId id, Map<String, String> slices) {
        journaled.replay(id, slices);
    }

    /** The MIG UUIDs the replayed records of job {@code id} named (start-up's compaction writes them, not mig.json's). */
    @Override
    public Map<String, String> journaledSlices(JobId id) {
        return journaled.of(id);
    }

    /** While the journal is replayed: job {@code id} ended. */
    @Override
    public void journaledEnd(JobId id) {
        journaled.forget(id);
    }

    /** Start-up applied what the records named: forgotten. */
    @Override
    public void journaledApplied() {
        journaled.applied();
    }
}
