// The one seam for what a grant makes on this host beyond the allocation core: the job's MIG slices, its
// environment (SGE_HGR_*, the GPU variable, the file), its CDI spec and its device policy, kept in step.
package rsmap.daemon;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.alloc.Grant;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;
import rsmap.device.Isolation;
import rsmap.map.Instance;
import rsmap.map.ResourceMap;
import rsmap.device.nvml.Inventory;
import rsmap.wire.Session;

/**
 * The shape of a Kubernetes DRA driver's {@code Prepare/Unprepare} and YARN's {@code preLaunchContainer /
 * postCompleteContainer}: a grant decided by the core is {@link #prepare}d (its slices made, its environment
 * named, its CDI spec written; one {@link Prepared#undo} takes it all back with the core's grant), {@link
 * #hold}s (the environment file and spec follow every change of what the job is told), is {@link #enter}ed
 * (the policy of a process), {@link #grown} or {@link #released} (a realloc, a RELEASE), and {@link #ended};
 * {@link #resync} brings every part in step with the held jobs (start-up, reconciliation, RELOAD).
 * <p>
 * Each rendering is a part of its own ({@link MigHost}, {@link EnvFiles}, {@link GpuHost}, {@link CdiSpecs},
 * the {@link Isolation} with its {@link Leftovers} and {@link ReleaseNarrowing}); no room outside this seam
 * reads them (ArchitectureTest). An authority has no such parts: {@link Parts#NONE}. Mutable, under the
 * daemon's lock.
 */
final class HostDevices {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The parts, made by the composition root ({@link Daemon}) for its role. */
    record Parts(EnvFiles envFiles, GpuHost gpus, CdiSpecs cdi, MigHost mig, Isolation isolation) {
        /** An authority's: it runs no job, so nothing is made on its host. */
        static Parts none() {
            return new Parts(EnvFiles.none(), GpuHost.NONE, CdiSpecs.NONE, MigHost.none(), Preflight.noIsolation());
        }
    }

    /** A start's renderings made: the job as it is told, what its start record names, and the one undo. */
    final class Prepared {
        private final Job job;

        private Prepared(Job job) {
            this.job = job;
        }

        /** The job as it is told: its grant with the environment its slices and cards make. */
        Job job() {
            return job;
        }

        /** The MIG UUID of each slice it holds, by place: what its start record names. */
        Map<String, String> slices() {
            return HostDevices.this.slices(job);
        }

        /** The start taken back: the core's grant freed, its spec removed, its slices destroyed. */
        void undo() {
            s.cluster().finish(job.id(), s.cluster().now());
            cdi.removed(job.id());
            mig.destroy(job.id());
        }
    }

    private final HostState s;
    private final LogBook log;
    private final EnvFiles envFiles;
    /** The host's GPUs (NVML, gpu_map): set at start and by each accepted RELOAD ({@link #reloaded}). */
    private GpuHost gpus;
    private final CdiSpecs cdi;
    private final MigHost mig;
    private final Isolation isolation;
    /** What a job's policy becomes at its end: removed, or closed while processes are left in it. */
    private final Leftovers leftovers;
    /** RELEASE's narrowing of the policy and its look for descriptors still open. */
    private final ReleaseNarrowing narrowing;
    /** The MIG UUIDs of held jobs' slices as the replayed records named them (start-up only). */
    private final JournaledSlices journaled = new JournaledSlices();

    HostDevices(HostState s, Parts parts, LogBook log) {
        this.s = s;
        this.log = log;
        this.envFiles = parts.envFiles();
        this.gpus = parts.gpus();
        this.cdi = parts.cdi();
        this.mig = parts.mig();
        this.isolation = parts.isolation();
        this.leftovers = new Leftovers(s, isolation, log);
        this.narrowing = new ReleaseNarrowing(s, isolation, log, this::instances);
        mig.onChange(s::changed); // QUERY's kept answers show the slices
    }

    // --- what a grant renders as: read by the verbs below and by the rooms that show a job ---

    /** A job's environment when it holds {@code grant}: its SGE_HGR_*, and the variable naming its cards. */
    Map<String, String> environment(Grant grant) {
        return mig.names.environment(gpus.environment(grant.environment(s.host())));
    }

    /**
     * The job's environment when it holds {@code held} (and its global part): a map it held before and holds
     * no more shows empty (a realloc, a RELEASE, a replayed change).
     */
    Map<String, String> environment(Job job, Grant held) {
        Map<String, String> env = new LinkedHashMap<>(environment(held.plus(job.remote())));
        Map<String, String> before = new LinkedHashMap<>(environment(job.grant().plus(job.releasing())));
        before.putAll(job.env());
        before.keySet().forEach(k -> env.putIfAbsent(k, ""));
        return env;
    }

    /** The instances behind a job's grant on this host (and the global host), for its device policy and spec. */
    List<Instance> instances(Job job) {
        return mig.names.withCaps(s.cluster().instancesOf(job.id()));
    }

    /** The configured instances behind {@code grant}'s identifiers (one per identifier), with their slices' nodes. */
    List<Instance> instances(Grant grant) {
        List<Instance> out = new ArrayList<>();
        grant.byHost().forEach((h, maps) -> {
            var values = s.cluster().hosts().get(h);
            if (values == null) {
                return;
            }
            maps.forEach((m, ids) -> values.resourceMap(m).ifPresent((ResourceMap rm) -> ids.forEach(id ->
                    rm.instance(id).ifPresent(out::add))));
        });
        return mig.names.withCaps(out); // a slice's capability nodes, where it has them
    }

    /** The MIG UUID of each slice {@code job} holds (granted or taken away), by place: what its records name. */
    Map<String, String> slices(Job job) {
        return mig.names.slices(job, s.host());
    }

    /** The MIG UUIDs of the slices a grow added to {@code job}, for its ALLOC and {@code alloc} event; null: none. */
    ObjectNode addedSlices(String job, Grant added) {
        return mig.names.added(job, added, s.host());
    }

    // --- a job's life ---

    /**
     * A grant the core just made for {@code granted} (its environment not yet named): its slices made
     * (docs/gpus.md, "Partitions on demand"), its environment named from them, its CDI spec written
     * (docs/containers.md). A part that fails takes back what the others made and the core's grant, and
     * says why: a failed slice taints its card (UNAVAILABLE or its own category), a spec that cannot be
     * written under {@code cdi = required} is UNAVAILABLE (the job goes elsewhere); a job never holds half
     * a grant.
     */
    Prepared prepare(Job granted) throws Session.CommandException {
        String id = granted.id();
        try {
            mig.create(id, granted.grant(), s.host());
        } catch (Session.CommandException e) {
            s.cluster().finish(id, s.cluster().now());
            s.cluster().reapplyExclusions(s.host());
            log.note(Log.Level.WARNING, e.getMessage());
            throw e;
        }
        Prepared p = new Prepared(granted.withEnv(environment(granted.grant())));
        Optional<String> failed = cdi.held(p.job(), instances(p.job()));
        if (failed.isPresent() && cdi.required()) {
            p.undo();
            throw new Session.CommandException(rsmap.wire.Category.UNAVAILABLE, "job " + id + ": " + failed.get()
                    + "; cdi = required");
        }
        return p;
    }

    /** A grant the core already holds (restored, not decided): nothing is made, and the same one undo. */
    Prepared restored(Job job) {
        return new Prepared(job);
    }

    /**
     * {@code job} holds what it says from now on: the state keeps it, its environment file says so when its
     * environment changed ({@code afterAnswer}: once the command is answered, {@link AfterAnswer}), its CDI
     * spec follows.
     */
    void hold(Job job, boolean afterAnswer) {
        Job before = s.job(job.id()).orElse(null);
        s.hold(job);
        if (before == null || !before.env().equals(job.env())) {
            envFiles.write(job.id(), job.user(), job.env(), afterAnswer);
        }
        cdi.held(job, cdi.on() ? instances(job) : List.of()); // its CDI spec, before the answer
    }

    /** {@link #hold}, its file written now. */
    void hold(Job job) {
        hold(job, false);
    }

    /**
     * Puts process {@code pid} under {@code job}'s device policy (closed where the job holds no device and the
     * host lists devices); a warning of the backend's, if it has one.
     */
    Optional<String> enter(Job job, long pid) throws DevicePolicyException {
        return isolation.apply(job.id(), policy(job), pid);
    }

    /** Whether {@code job}'s policy grants every device (no map of the host lists devices, or isolation off). */
    boolean open(Job job) {
        return policy(job).isOpen();
    }

    private DevicePolicy policy(Job job) {
        return DevicePolicy.of(instances(job), s.devicesListed());
    }

    /** The job as JOB_ENTER answers it: with its CDI device's name where it has a spec (docs/containers.md). */
    Job entering(Job job) {
        return cdi.entering(job, s.devicesListed());
    }

    /**
     * The slices a grow added, made before the job is told. The core has already committed the grow: a
     * creation that fails leaves the job holding the place without a slice (its policy has no capability
     * node for it: it cannot use it), logged, and taints the card.
     */
    void grown(String job, Grant added, String tag) {
        try {
            mig.create(job, added, s.host());
        } catch (Session.CommandException e) {
            log.note(Log.Level.ERROR, e.getMessage() + " (the realloc " + tag + " stands; release the place)");
            s.cluster().reapplyExclusions(s.host());
        }
    }

    /** {@code now}'s policy widened by what a grow added, where a process of it runs; failing closed. */
    void widened(Job now, Grant added) {
        if (added.isEmpty() || now.pids().isEmpty()) {
            return;
        }
        try {
            isolation.update(now.id(), policy(now)).ifPresent(w -> log.note(Log.Level.WARNING, w));
        } catch (DevicePolicyException e) {
            // Failing closed: the job holds the instances but cannot open their devices.
            log.note(Log.Level.ERROR, "job " + now.id() + ": its device policy could not be widened to "
                    + added.byHost() + ": " + e.getMessage());
        }
    }

    /**
     * RELEASE, before the core frees anything: {@code job}'s policy narrowed to what it keeps; refused,
     * changing nothing, while a process of it still holds a released device open ({@link ReleaseNarrowing}).
     */
    void narrow(Job job, Grant ids, Grant kept) throws Session.CommandException {
        narrowing.narrow(job, ids, instances(ids), instances(kept));
    }

    /** The core refused the release after {@link #narrow}: the policy as it was. */
    void widenBack(Job job) {
        narrowing.widenBack(job);
    }

    /** After RELEASE is on disk and held: the slices {@code now} no longer holds are destroyed. */
    void released(Job now) {
        mig.destroyReleased(now.id(), now.grant().plus(now.releasing()), s.host()); // after the narrowing
    }

    /**
     * Job {@code id} holds nothing here any more: the state forgets it, its environment file and spec go, its
     * policy is removed (closed while processes are left in it), then its slices are destroyed (no process
     * of the job reaches them any more).
     */
    void ended(String id) {
        s.drop(id);
        envFiles.remove(id);
        cdi.removed(id);
        removePolicy(id);
        mig.destroy(id);
    }

    /**
     * Drops the device policy of a job, held or bare; processes left in its cgroup keep a closed policy that
     * grants no device until they exit ({@link Leftovers}).
     */
    void removePolicy(String id) {
        s.bare.drop(id);
        leftovers.ended(id);
    }

    // --- start-up, reconciliation, RELOAD ---

    /** While the journal is replayed: the MIG UUIDs the records of job {@code id} name. */
    void journaled(String id, Map<String, String> slices) {
        journaled.replay(id, slices);
    }

    /** The MIG UUIDs the replayed records of job {@code id} named (start-up's compaction writes them, not mig.json's). */
    Map<String, String> journaledSlices(String id) {
        return journaled.of(id);
    }

    /** While the journal is replayed: job {@code id} ended. */
    void journaledEnd(String id) {
        journaled.forget(id);
    }

    /**
     * Start-up, once the journal is replayed: what a lost or older mig.json forgot adopted again (the jobs'
     * environments made again from what it now says), what an earlier run set aside shown, then every part
     * in step ({@link #resync}) before anything is served.
     */
    void started() {
        mig.adopt(s.jobs(), s.host(), journaled::of, envFiles::read).forEach(id -> s.job(id)
                .ifPresent(j -> s.replay(j.withEnv(environment(j, j.grant())))));
        journaled.applied();
        // what a kill left out of step (after an answer, inside a file), and what the mended mig.json changed
        envFiles.agree(s.jobs());
        resync();
        leftovers.adopt(); // what an earlier run set aside, shown and removed once empty
    }

    /**
     * Every part in step with the held jobs: slices of no held job destroyed, the card-and-slices exclusions
     * applied again, every held job's spec written as it holds now and every other spec of rsmapd's removed.
     */
    void resync() {
        slicesInStep();
        specsInStep();
    }

    /** Slices rsmapd made that no held job holds destroyed; the card-and-slices exclusions applied again. */
    void slicesInStep() {
        mig.reconcile(s.jobIds());
        s.cluster().reapplyExclusions(s.host());
    }

    /** Reconciliation's first step: the ended jobs' processes left under a closed policy looked at again. */
    void sweepLeftovers() {
        leftovers.sweep();
    }

    /** Every held job's spec written as it holds now, every other spec of rsmapd's removed (jobs gone meanwhile). */
    void specsInStep() {
        cdi.sync(s.jobs(), this::instances);
    }

    /** The parts as a RELOAD found them, to put back when it is refused. */
    static final class BeforeReload {
        private final MigHost.Before mig;

        private BeforeReload(MigHost.Before mig) {
            this.mig = mig;
        }
    }

    /** What RELOAD's read of the configuration may change (MIG's cards and settings), to put back if refused. */
    BeforeReload beforeReload() {
        return new BeforeReload(mig.before());
    }

    /** RELOAD refused: MIG as it was, creation taints too (docs/gpus.md). */
    void reloadRefused(BeforeReload before) {
        mig.restore(before.mig);
    }

    /** RELOAD accepted with the GPUs it read: the held jobs' specs with the new generation's devices=. */
    void reloaded(GpuHost read) {
        gpus = read;
        cdi.sync(s.jobs(), this::instances);
        s.cluster().reapplyExclusions(s.host()); // MIG cards read again, taints cleared
    }

    // --- what the host's devices show ---

    /** NVML's inventory as last read, where gpu_map is built from it. */
    Optional<Inventory> inventory() {
        return gpus.inventory();
    }

    /** The driver and each card, where NVML was read (docs/gpus.md), for QUERY. */
    ObjectNode facts() {
        return gpus.facts();
    }

    /** The host's GPU attributes NVML gave (discovery's). */
    Map<String, String> attributes() {
        return gpus.attributes();
    }

    /** The slices on demand: the map of slices, when mig_map is set. */
    Optional<String> migMap() {
        return mig.map();
    }

    /**
     * The slices (docs/gpus.md): each of rsmapd's with its profile, card and MIG UUID, then each an admin made
     * ({@code static}), for QUERY.
     */
    ArrayNode slicesShown() {
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
    String explainSlices(rsmap.request.RequestList request, Map<String, List<Map.Entry<String, String>>> holders,
                         java.util.function.UnaryOperator<String> shown) {
        return MigExplain.text(mig, request, holders, shown);
    }

    /** The card-and-slices exclusions of {@code values} ({@link MigExclusions}): the core's exclusion rule. */
    rsmap.alloc.Exclusions exclusions(rsmap.map.ComplexValues values) {
        return mig.exclusions(values);
    }

    /** The environment file of job {@code id} as written: what the job was told (empty: none). */
    Map<String, String> told(String id) {
        return envFiles.read(id);
    }
}
