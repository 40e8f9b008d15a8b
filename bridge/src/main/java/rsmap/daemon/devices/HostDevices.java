// The one seam for what a grant makes on this host beyond the allocation core: the job's MIG slices, its
// environment (SGE_HGR_*, the GPU variable, the file), its CDI spec and its device policy, kept in step.
package rsmap.daemon.devices;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.alloc.Grant;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.Refusal;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;
import rsmap.device.DryRunBackend;
import rsmap.device.Isolation;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.map.Instance;
import rsmap.map.ResourceMap;
import rsmap.daemon.state.JobId;

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
public final class HostDevices {
    /** The parts, made by the composition root ({@code Daemon}) for its role; the GPUs are read through {@code DeviceViews}. */
    public record Parts(EnvFiles envFiles, CdiSpecs cdi, MigHost mig, Isolation isolation) {
        /** An authority's: it runs no job, so nothing is made on its host. */
        public static Parts none() {
            return new Parts(EnvFiles.none(), CdiSpecs.NONE, MigHost.none(), HostDevices.noIsolation());
        }
    }

    /** A start's renderings made: the job as it is told, what its start record names, and the one undo. */
    public final class Prepared {
        private final Job job;

        private Prepared(Job job) {
            this.job = job;
        }

        /** The job as it is told: its grant with the environment its slices and cards make. */
        public Job job() {
            return job;
        }

        /** The MIG UUID of each slice it holds, by place: what its start record names. */
        public Map<String, String> slices() {
            return views.slices(job);
        }

        /** The start taken back: the core's grant freed, its spec removed, its slices destroyed. */
        public void undo() {
            s.cluster().finish(job.id().toString(), s.cluster().now());
            cdi.removed(job.id());
            mig.destroy(job.id());
        }
    }

    private final HostState s;
    private final LogBook log;
    /** What the devices name and show (the environment, the GPUs, the slices' UUIDs): the state's. */
    private final HostDeviceViews views;
    private final EnvFiles envFiles;
    private final CdiSpecs cdi;
    private final MigHost mig;
    private final Isolation isolation;
    /** What a job's policy becomes at its end: removed, or closed while processes are left in it. */
    private final Leftovers leftovers;
    /** RELEASE's narrowing of the policy and its look for descriptors still open. */
    private final ReleaseNarrowing narrowing;
    public HostDevices(HostState s, HostDeviceViews views, Parts parts, LogBook log) {
        this.s = s;
        this.log = log;
        this.views = views;
        this.envFiles = parts.envFiles();
        this.cdi = parts.cdi();
        this.mig = parts.mig();
        this.isolation = parts.isolation();
        this.leftovers = new Leftovers(s, isolation, log);
        this.narrowing = new ReleaseNarrowing(s, isolation, log, this::instances);
        mig.onChange(s::changed); // QUERY's kept answers show the slices
    }

    // --- what a grant renders as ---

    /** The instances behind a job's grant on this host (and the global host), for its device policy and spec. */
    List<Instance> instances(Job job) {
        return views.withCaps(s.cluster().instancesOf(job.id().toString()));
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
        return views.withCaps(out); // a slice's capability nodes, where it has them
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
    public Prepared prepare(Job granted) throws Refusal {
        JobId id = granted.id();
        try {
            mig.create(id, granted.grant(), s.host());
        } catch (Refusal e) {
            s.cluster().finish(id.toString(), s.cluster().now());
            s.cluster().reapplyExclusions(s.host());
            log.note(Log.Level.WARNING, e.getMessage());
            throw e;
        }
        Prepared p = new Prepared(granted.withEnv(views.environment(granted.grant())));
        Optional<String> failed = cdi.held(p.job(), instances(p.job()));
        if (failed.isPresent() && cdi.required()) {
            p.undo();
            throw new Refusal(Refusal.Kind.UNAVAILABLE, "job " + id + ": " + failed.get()
                    + "; cdi = required");
        }
        return p;
    }

    /** A grant the core already holds (restored, not decided): nothing is made, and the same one undo. */
    public Prepared restored(Job job) {
        return new Prepared(job);
    }

    /**
     * {@code job} holds what it says from now on: the state keeps it, its environment file says so when its
     * environment changed ({@code afterAnswer}: once the command is answered, {@code AfterAnswer}), its CDI
     * spec follows.
     */
    public void hold(Job job, boolean afterAnswer) {
        Job before = s.job(job.id()).orElse(null);
        s.hold(job);
        if (before == null || !before.env().equals(job.env())) {
            envFiles.write(job.id(), job.user(), job.env(), afterAnswer);
        }
        cdi.held(job, cdi.on() ? instances(job) : List.of()); // its CDI spec, before the answer
    }

    /** {@link #hold}, its file written now. */
    public void hold(Job job) {
        hold(job, false);
    }

    /**
     * Puts process {@code pid} under {@code policy}, {@code job}'s ({@link #policy}); a warning of the backend's,
     * if it has one.
     */
    public Optional<String> enter(Job job, DevicePolicy policy, long pid) throws DevicePolicyException {
        return isolation.apply(job.id().toString(), policy, pid);
    }

    /** {@code job}'s device policy: closed where it holds no device and the host's maps list devices. */
    public DevicePolicy policy(Job job) {
        return DevicePolicy.of(instances(job), s.devicesListed());
    }

    /** The job as JOB_ENTER answers it: with its CDI device's name where it has a spec (docs/containers.md). */
    public Job entering(Job job) {
        return cdi.entering(job, s.devicesListed());
    }

    /**
     * The slices a grow added, made before the job is told. The core has already committed the grow: a
     * creation that fails leaves the job holding the place without a slice (its policy has no capability
     * node for it: it cannot use it), logged, and taints the card.
     */
    public void grown(JobId job, Grant added, String tag) {
        try {
            mig.create(job, added, s.host());
        } catch (Refusal e) {
            log.note(Log.Level.ERROR, e.getMessage() + " (the realloc " + tag + " stands; release the place)");
            s.cluster().reapplyExclusions(s.host());
        }
    }

    /** {@code now}'s policy widened by what a grow added, where a process of it runs; failing closed. */
    public void widened(Job now, Grant added) {
        if (added.isEmpty() || now.pids().isEmpty()) {
            return;
        }
        try {
            isolation.update(now.id().toString(), policy(now)).ifPresent(w -> log.note(Log.Level.WARNING, w));
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
    public void narrow(Job job, Grant ids, Grant kept) throws Refusal {
        narrowing.narrow(job, ids, instances(ids), instances(kept));
    }

    /** The core refused the release after {@link #narrow}: the policy as it was. */
    public void widenBack(Job job) {
        narrowing.widenBack(job);
    }

    /** After RELEASE is on disk and held: the slices {@code now} no longer holds are destroyed. */
    public void released(Job now) {
        mig.destroyReleased(now.id(), now.grant().plus(now.releasing()), s.host()); // after the narrowing
    }

    /**
     * Job {@code id} holds nothing here any more: the state forgets it, its environment file and spec go, its
     * policy is removed (closed while processes are left in it), then its slices are destroyed (no process
     * of the job reaches them any more).
     */
    public void ended(JobId id) {
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
    public void removePolicy(JobId id) {
        s.bare.drop(id);
        leftovers.ended(id);
    }

    // --- start-up, reconciliation, RELOAD ---

    /**
     * Start-up, once the journal is replayed: what a lost or older mig.json forgot adopted again (the jobs'
     * environments made again from what it now says), what an earlier run set aside shown, then every part
     * in step ({@link #resync}) before anything is served.
     */
    public void started() {
        mig.adopt(s.jobs(), s.host(), views::journaledSlices, envFiles::read).forEach(id -> s.job(id)
                .ifPresent(j -> s.replay(j.withEnv(views.environment(j, j.grant())))));
        views.journaledApplied();
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
    public void slicesInStep() {
        mig.reconcile(s.jobIds());
        s.cluster().reapplyExclusions(s.host());
    }

    /** Reconciliation's first step: the ended jobs' processes left under a closed policy looked at again. */
    public void sweepLeftovers() {
        leftovers.sweep();
    }

    /** Every held job's spec written as it holds now, every other spec of rsmapd's removed (jobs gone meanwhile). */
    public void specsInStep() {
        cdi.sync(s.jobs(), this::instances);
    }

    /** The parts as a RELOAD found them, to put back when it is refused. */
    public static final class BeforeReload {
        private final MigHost.Before mig;

        private BeforeReload(MigHost.Before mig) {
            this.mig = mig;
        }
    }

    /** What RELOAD's read of the configuration may change (MIG's cards and settings), to put back if refused. */
    public BeforeReload beforeReload() {
        return new BeforeReload(mig.before());
    }

    /** RELOAD refused: MIG as it was, creation taints too (docs/gpus.md). */
    public void reloadRefused(BeforeReload before) {
        mig.restore(before.mig);
    }

    /** RELOAD accepted with the GPUs it read: the held jobs' specs with the new generation's devices=. */
    public void reloaded(GpuHost read) {
        views.gpus(read);
        cdi.sync(s.jobs(), this::instances);
        s.cluster().reapplyExclusions(s.host()); // MIG cards read again, taints cleared
    }

    /** No device isolation: an authority's (it runs no job). */
    public static Isolation noIsolation() {
        return new Isolation(new DryRunBackend(), Isolation.Mode.OFF);
    }
}
