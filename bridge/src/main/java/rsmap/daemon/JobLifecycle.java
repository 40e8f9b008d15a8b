// A job's life on this host: JOB_START grants, JOB_ENTER puts a process under the job's device policy,
// JOB_END frees; each step journaled before it is answered and announced to the event streams.
package rsmap.daemon;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import rsmap.ParseException;
import rsmap.alloc.Decision;
import rsmap.alloc.Grant;
import rsmap.alloc.JobSpec;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;
import rsmap.device.Isolation;
import rsmap.device.JobCgroups;
import rsmap.wire.Category;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.PeerCredentials;
import rsmap.wire.Session;

/** Called under the daemon's lock, with arguments already checked ({@link Commands}). */
final class JobLifecycle {
    private final HostState s;
    private final Records journal;
    private final Isolation isolation;
    private final EventHub events;
    private final LogBook log;
    private final Access access;
    private final Reallocation reallocation;
    /** The host's global part: none, or the link to its authority (docs/cluster.md). */
    private final GlobalPart global;
    /** What a job's policy becomes at its end: removed, or closed while processes are left in it. */
    final Leftovers leftovers;

    JobLifecycle(HostState s, Records journal, Isolation isolation, EventHub events, LogBook log, Access access,
                 Reallocation reallocation, GlobalPart global) {
        this.s = s;
        this.journal = journal;
        this.isolation = isolation;
        this.events = events;
        this.log = log;
        this.access = access;
        this.reallocation = reallocation;
        this.global = global;
        this.leftovers = new Leftovers(s, isolation, log);
    }

    /**
     * Grants the job its instances here, answered by STATE. A retry of the same start (same request, owner
     * and slots, no process entered yet) after a lost answer is answered with the grant already made (hole
     * 6, the idempotent prepare of Kubernetes DRA drivers); anything else for a job that holds a grant is
     * refused. execd already started the job here, so it cannot wait: a grant that is not possible now is
     * refused with the core's reason, and nothing is left behind.
     */
    List<Frame> start(long tid, JobId jobId, String user, String request, int slots) throws Session.CommandException {
        String id = jobId.toString();
        Job held = s.job(id).orElse(null);
        if (held != null) {
            if (held.request().equals(request) && held.user().equals(user) && held.slots() == slots
                    && held.pids().isEmpty()) {
                log.note(Log.Level.INFO, "job " + id + ": JOB_START again (a retry), answered with its grant "
                        + held.env());
                return List.of(answer(tid, held));
            }
            throw new Session.CommandException(Category.BUSY, "job " + id + " already holds " + held.grant().byHost()
                    + "; a second JOB_START is refused (no doubled grants)");
        }
        JobSpec spec;
        String global;
        try {
            s.prepare(s.cluster(), id);
            spec = s.spec(id, request, slots);
            global = s.globalPart(request);
        } catch (ParseException e) {
            throw new Session.CommandException(Category.REFUSED, "request: " + e.getMessage());
        }
        if (s.bare.of(id).isPresent()) {
            // Processes entered this job before its prolog: not the order execd keeps, but a process that
            // waits in the job's cgroup for the grant to widen it. It leaves before anything is granted.
            log.note(Log.Level.WARNING, "job " + id + ": processes " + s.bare.of(id).get().pids().keySet()
                    + " entered before its JOB_START; their policy is removed before the grant");
            removePolicy(id);
        }
        JobSpec pinned = GroupAgreement.held(s, this.global, jobId, spec); // one group for the whole job
        try {
            if (!global.isEmpty()) {
                return startWithGlobalPart(tid, jobId, user, request, slots, pinned, global);
            }
            Decision d = grantNow(pinned, id);
            slices(id, d.grant()); // created before the job is told (the environment names their MIG UUIDs)
            Job job = new Job(id, user, request, slots, d.grant(), Grant.NONE, Grant.NONE,
                    s.environment(d.grant()), Map.of());
            containers(job);
            // forced before the answer (Commands.handle)
            written(JournalRecord.Started.of(job, s.mig.names.slices(job, s.host())));
            journal.forceSoon(); // the disk writes it while the answer is made
            return granted(tid, job);
        } catch (Session.CommandException e) {
            if (pinned != spec) {
                this.global.end(jobId); // told its groups, granted nothing: the authority counts this host out
            }
            throw e;
        }
    }

    /** The core decides now or says why not; nothing is queued (execd already started the job here). */
    private Decision grantNow(JobSpec spec, String id) throws Session.CommandException {
        Decision d = s.cluster().grantNow(spec, s.cluster().now());
        if (d.isRefused() || d.result() == Decision.Result.NOT_NOW) {
            throw new Session.CommandException(Category.BUSY, d.isRefused() ? d.error() : "job " + id + " cannot be granted now: "
                    + d.error());
        }
        return d;
    }

    /**
     * The CDI spec of a job granted in the core, written before its start is journaled (docs/containers.md):
     * under cdi = required a spec that cannot be written fails the start closed, the grant undone
     * (UNAVAILABLE: the job goes elsewhere); under optional it was logged.
     */
    private void containers(Job job) throws Session.CommandException {
        Optional<String> failed = s.cdi.held(job, s.grantedInstances(job));
        if (failed.isPresent() && s.cdi.required()) {
            s.cluster().finish(job.id(), s.cluster().now());
            s.mig.destroy(job.id()); // its slices too: a job never holds half a grant
            throw new Session.CommandException(Category.UNAVAILABLE, "job " + job.id() + ": " + failed.get()
                    + "; cdi = required");
        }
    }

    /**
     * A job granted and on its way to disk: held, announced, answered; its environment file and log line
     * follow the answer (the prolog does not wait for them; the job's JOB_ENTER finds the file).
     */
    private List<Frame> granted(long tid, Job job) {
        s.hold(job, true);
        s.after.add(() -> log.note(Log.Level.INFO, "job " + job.id() + (job.user().isEmpty() ? "" : " (" + job.user()
                + ")") + " granted " + job.env()));
        publish("grant", job, () -> Views.job(job).put("event", "grant"));
        return List.of(answer(tid, job));
    }

    /**
     * A job whose grant {@link HostState#cluster} already holds (restored, not decided): journaled like a
     * grant, held, announced; false, freeing it in the core again, when it is not on disk.
     */
    boolean adopt(Job job) {
        try {
            written(JournalRecord.Started.of(job, s.mig.names.slices(job, s.host())));
        } catch (Session.CommandException e) {
            return false;
        }
        s.hold(job);
        publish("grant", job, () -> Views.job(job).put("event", "grant"));
        return true;
    }

    /**
     * A start whose request names global maps: this host's part is decided first (a job that
     * cannot start here costs the authority nothing), its start record written marked PENDING, then the
     * global part is asked of the authority and, while it decides, this host forces its record: the two
     * forced writes overlap. Only when both are granted is the job answered; the authority's answer is
     * recorded without a force of its own (the authority holds it durably; a host that lost it learns it
     * at its next connect, {@link PendingStarts}). Refused by the authority: this host's part is freed,
     * so that a job never holds half a grant.
     */
    private List<Frame> startWithGlobalPart(long tid, JobId jobId, String user, String request, int slots, JobSpec spec,
                                            String globalRequest) throws Session.CommandException {
        String id = jobId.toString();
        Decision d = grantNow(spec, id);
        slices(id, d.grant());
        Job local = new Job(id, user, request, slots, d.grant(), Grant.NONE, Grant.NONE,
                s.environment(d.grant()), Map.of());
        containers(local);
        written(JournalRecord.Started.pending(local, s.mig.names.slices(local, s.host())));
        Grant remote;
        try {
            remote = global.start(jobId, user, slots, globalRequest, this::forced);
        } catch (Session.CommandException e) {
            s.cluster().finish(id, s.cluster().now());
            s.cdi.removed(id); // written before the authority was asked
            s.mig.destroy(id); // its slices too: a job never holds half a grant
            try {
                journal.write(new JournalRecord.Ended(id, "authority"));
            } catch (Session.CommandException x) {
                log.note(Log.Level.WARNING, "job " + id + ": " + x.getMessage() + " (its start is resolved "
                        + "with the authority at the next connect)");
            }
            throw e;
        }
        Job job = local.withRemote(remote, s.environment(local.grant().plus(remote)));
        try {
            journal.writeLazily(new JournalRecord.Remote(id, remote));
        } catch (Session.CommandException e) {
            s.pending(id); // learnt again from the authority at the next connect
            log.note(Log.Level.WARNING, "job " + id + ": " + e.getMessage());
        }
        return granted(tid, job);
    }

    /** Forces what was written to the journal ({@link Records#force}: a failure stops rsmapd). */
    void forced() {
        journal.force();
    }

    /** A start's record written; when it cannot be, the grant the core just made is undone (not granted). */
    private void written(JournalRecord.Started r) throws Session.CommandException {
        try {
            journal.write(r);
        } catch (Session.CommandException e) {
            s.cluster().finish(r.job(), s.cluster().now());
            s.cdi.removed(r.job()); // written before the journal: no grant, no spec
            s.mig.destroy(r.job());
            throw e;
        }
    }

    /** STATE {job, user, grants, env}, then the environment again as NAME=value (the C hook reads no JSON). */
    static Frame answer(long tid, Job job) {
        return answer(tid, job, job.env());
    }

    /** The same with the lines of {@code env}: the job's own and what JOB_ENTER adds for the starter only. */
    private static Frame answer(long tid, Job job, Map<String, String> env) {
        List<String> args = new ArrayList<>();
        args.add(Views.jobText(job));
        env.forEach((k, v) -> args.add(k + "=" + v));
        return Frame.of(tid, Code.STATE.value(), args.toArray(new String[0]));
    }

    /**
     * Frees the job's grant and removes its policy. A job that holds nothing here ends too (idempotent,
     * a retry after a lost answer, or a job that requested no map); its policy goes by name, also
     * one applied before a restart.
     */
    void end(String id, String why) throws Session.CommandException {
        Job job = s.job(id).orElse(null);
        if (job == null) {
            removePolicy(id);
            return;
        }
        s.after.work(); // a grant's line still waiting comes before its end's; its file is dropped unwritten
        journal.write(new JournalRecord.Ended(id, why)); // forced before the answer, or by the caller
        journal.forceSoon(); // while the grant is freed and its files removed
        boolean keyed = global.agreesGroups() && !s.cluster().groupKeys(id).isEmpty(); // before the core frees it
        // Its waiting reallocs are answered CANCEL; what it held, taken-away instances included, is free.
        rsmap.realloc.Outcome o = s.reallocs().finish(id, s.cluster().now());
        s.drop(id);
        removePolicy(id);
        s.mig.destroy(id); // after the policy is narrowed: no process of the job reaches the slice any more
        reallocation.dispatch(o.events());
        if (!job.remote().isEmpty() || keyed) {
            global.end(JobId.parse(id).orElseThrow()); // told now, or as soon as the authority is back
        }
        if (why.equals("epilog")) {
            log.note(Log.Level.INFO, "job " + id + " released " + job.env());
        }
        publish("release", job, () -> Views.job(job).put("event", "release").put("why", why));
    }

    private void publish(String kind, Job job, Supplier<ObjectNode> diff) {
        events.publish(kind, job.maps(), job.id(), job.user(), diff, stream -> access.mayQuery(stream.peer(), job));
    }

    /**
     * Drops the device policy of a job, held or bare; processes left in its cgroup keep a closed policy that
     * grants no device until they exit ({@link Leftovers}). A failure is logged (a cgroup left behind matters).
     */
    void removePolicy(String id) {
        s.bare.drop(id);
        leftovers.ended(id);
    }

    /**
     * The first task of a job on a host where its prolog did not run (a slave host of a parallel job): granted
     * here from the request execd spooled for the job's pe tasks ({@link SlaveSpool}), journaled and refused
     * like a JOB_START; empty when the spool holds nothing to grant. Its end is reconciliation's: execd removes
     * the job's {@code active_jobs} directory when the job ends on this host, and no epilog runs here.
     */
    private Optional<Job> slaveStart(long tid, JobId jobId, Session.Peer peer) throws Session.CommandException {
        String id = jobId.toString();
        SlaveSpool.Start t = SlaveSpool.read(s.config.execdSpool(), jobId).orElse(null);
        if (t == null) {
            return Optional.empty();
        }
        if (!access.mayQuery(peer, Job.bare(id, t.user()))) {
            throw new Session.CommandException(Category.DENIED, "job " + id + " belongs to '" + t.user() + "' (" + t.from()
                    + "), not '" + peer.user() + "'");
        }
        try {
            start(tid, jobId, t.user(), t.request(), t.slots());
        } catch (Session.CommandException e) {
            throw new Session.CommandException(e.category(), "job " + id + ": pe task on a host where its prolog did not run, "
                    + "request '" + t.request() + "' from " + t.from() + ": " + e.getMessage());
        }
        s.after.work(); // the grant's line first
        log.note(Log.Level.INFO, "job " + id + ": granted at its first JOB_ENTER on this host, from " + t.from());
        return s.job(id);
    }

    /**
     * The starter: puts the calling process (its pid from SO_PEERCRED, never from the message) under the
     * job's device policy, and answers the job's environment like JOB_START. Only root, the admin or the
     * job's owner may, and never for a process inside another job's cgroup: that could widen what the
     * other job reaches. A job that holds nothing here is entered too, under a closed policy that grants
     * no device (the starter fails closed, as flux-core's gpubind hides every GPU from a job
     * granted none); only hosts whose maps list no devices, or isolation = off, leave it unrestricted.
     */
    List<Frame> enter(long tid, JobId jobId, Session.Peer peer) throws Session.CommandException {
        String id = jobId.toString();
        Job job = s.job(id).orElse(null);
        if (job != null && !access.mayQuery(peer, job)) {
            throw new Session.CommandException(Category.DENIED, "job " + id + " belongs to '" + job.user() + "', not '" + peer.user() + "'");
        }
        if (peer.pid() <= 0) {
            throw new Session.CommandException(Category.DENIED, "the caller's pid is unknown: " + (PeerCredentials.UNAVAILABLE.isEmpty()
                    ? "the kernel did not say" : PeerCredentials.UNAVAILABLE));
        }
        try {
            Optional<String> other = JobCgroups.foreignJob(peer.pid(), id);
            if (other.isPresent()) {
                throw new Session.CommandException(Category.DENIED, "process " + peer.pid() + " is in the cgroup of job " + other.get()
                        + ", not of job " + id + "; refused");
            }
        } catch (IOException e) {
            throw new Session.CommandException(Category.UNAVAILABLE, "process " + peer.pid() + ": cannot read its cgroups: " + e.getMessage());
        }
        boolean slave = false;
        if (job == null && s.bare.of(id).isEmpty() && s.config.execdSpool() != null) {
            job = slaveStart(tid, jobId, peer).orElse(null);
            slave = job != null;
        }
        if (job == null) {
            job = s.bare.of(id).orElse(Job.bare(id, peer.user()));
        }
        DevicePolicy policy = DevicePolicy.of(s.grantedInstances(job), s.devicesListed());
        try {
            isolation.apply(id, policy, peer.pid()).ifPresent(w -> log.note(Log.Level.WARNING, w));
        } catch (DevicePolicyException e) {
            if (slave) { // granted for this task alone, which does not run: given back now
                end(id, "unenforceable");
            }
            throw new Session.CommandException(Category.UNAVAILABLE, "job " + id + ": device isolation cannot be enforced: " + e.getMessage());
        }
        Instant start = ProcessHandle.of(peer.pid()).flatMap(p -> p.info().startInstant()).orElse(null);
        Job entered = job.withPid(peer.pid(), start);
        if (!s.holds(id)) {
            s.bare.entered(entered);
            log.note(Log.Level.INFO, "job " + id + " holds nothing here: process " + peer.pid() + " entered under "
                    + (policy.isOpen() ? "no device policy (no map lists devices)" : "a closed policy with no granted device"));
            return List.of(answer(tid, entered));
        }
        journal.write(new JournalRecord.Entered(id, peer.pid(), Optional.ofNullable(start)));
        s.hold(entered);
        s.after.settle(); // a slave host's grant just made: its file is there before the job's process runs
        // RSMAP_CDI_DEVICE in the lines only, not in the STATE JSON (docs/protocol.md, JOB_ENTER)
        return List.of(answer(tid, entered, s.cdi.entering(entered, s.devicesListed()).env()));
    }

    /**
     * The job's MIG slices made before it is answered (docs/gpus.md, "Partitions on demand"); a creation that
     * fails frees the grant, and its card is tainted (source mig: no new grant there until undrained).
     */
    private void slices(String id, Grant grant) throws Session.CommandException {
        try {
            s.mig.create(id, grant, s.config.host());
        } catch (Session.CommandException e) {
            s.cluster().finish(id, s.cluster().now());
            s.cluster().reapplyExclusions(s.config.host());
            log.note(Log.Level.WARNING, e.getMessage());
            throw e;
        }
    }
}
