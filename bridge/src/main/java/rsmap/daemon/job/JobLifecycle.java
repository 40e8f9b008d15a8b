// A job's life on this host: JOB_START grants, JOB_ENTER puts a process under the job's device policy,
// JOB_END frees; each step journaled before it is answered and announced to the event streams.
// What a grant makes on the host goes through one seam (HostDevices): decide, prepare, journal, hold.
package rsmap.daemon.job;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import rsmap.ParseException;
import rsmap.alloc.Decision;
import rsmap.alloc.Grant;
import rsmap.alloc.JobSpec;
import rsmap.daemon.devices.HostDevices;
import rsmap.daemon.records.JournalRecord;
import rsmap.daemon.records.Records;
import rsmap.daemon.state.Access;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;
import rsmap.device.JobCgroups;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.wire.Frame;
import rsmap.wire.PeerCredentials;
import rsmap.wire.Session;

/** Called under the daemon's lock, with arguments already checked ({@code Commands}). */
public final class JobLifecycle {
    private final HostState s;
    private final Records journal;
    /** What a grant makes on this host: the one seam (prepare, hold, enter, ended). */
    private final HostDevices devices;
    private final EventHub events;
    private final LogBook log;
    private final Access access;
    private final Reallocation reallocation;
    /** The host's global part: none, or the link to its authority (docs/cluster.md). */
    private final GlobalPart global;

    public JobLifecycle(HostState s, HostDevices devices, Records journal, EventHub events, LogBook log, Access access,
                 Reallocation reallocation, GlobalPart global) {
        this.s = s;
        this.journal = journal;
        this.devices = devices;
        this.events = events;
        this.log = log;
        this.access = access;
        this.reallocation = reallocation;
        this.global = global;
    }

    /**
     * Grants the job its instances here, answered by STATE. A retry of the same start (same request, owner
     * and slots, no process entered yet) after a lost answer is answered with the grant already made (hole
     * 6, the idempotent prepare of Kubernetes DRA drivers); anything else for a job that holds a grant is
     * refused. execd already started the job here, so it cannot wait: a grant that is not possible now is
     * refused with the core's reason, and nothing is left behind.
     */
    public List<Frame> start(long tid, JobId jobId, String user, String request, int slots) throws Refusal {
        JobId id = jobId;
        Job held = s.job(id).orElse(null);
        if (held != null) {
            if (held.request().equals(request) && held.user().equals(user) && held.slots() == slots
                    && held.pids().isEmpty()) {
                log.note(Log.Level.INFO, "job " + id + ": JOB_START again (a retry), answered with its grant "
                        + held.env());
                return List.of(JobAnswer.of(tid, held));
            }
            throw Refusal.busy("job " + id + " already holds " + held.grant().byHost()
                    + "; a second JOB_START is refused (no doubled grants)");
        }
        JobSpec spec;
        String global;
        try {
            s.prepare(s.cluster(), id);
            spec = s.spec(id, request, slots);
            global = s.globalPart(request);
        } catch (ParseException e) {
            throw Refusal.refused("request: " + e.getMessage());
        }
        if (s.bare.of(id).isPresent()) {
            // Processes entered this job before its prolog: not the order execd keeps, but a process that
            // waits in the job's cgroup for the grant to widen it. It leaves before anything is granted.
            log.note(Log.Level.WARNING, "job " + id + ": processes " + s.bare.of(id).get().pids().keySet()
                    + " entered before its JOB_START; their policy is removed before the grant");
            devices.removePolicy(id);
        }
        JobSpec pinned = GroupAgreement.held(s, this.global, jobId, spec); // one group for the whole job
        try {
            if (!global.isEmpty()) {
                return startWithGlobalPart(tid, jobId, user, request, slots, pinned, global);
            }
            Decision d = grantNow(pinned, id);
            // its slices, environment and CDI spec made before the job is told (the environment names their MIG UUIDs)
            HostDevices.Prepared p = devices.prepare(new Job(id, user, request, slots, d.grant(), Grant.NONE,
                    Grant.NONE, Map.of(), Map.of()));
            written(JournalRecord.Started.of(p.job(), p.slices()), p); // forced before the answer (Commands.handle)
            journal.forceSoon(); // the disk writes it while the answer is made
            return granted(tid, p.job());
        } catch (Refusal e) {
            if (pinned != spec) {
                this.global.end(jobId); // told its groups, granted nothing: the authority counts this host out
            }
            throw e;
        }
    }

    /** The core decides now or says why not; nothing is queued (execd already started the job here). */
    private Decision grantNow(JobSpec spec, JobId id) throws Refusal {
        Decision d = s.cluster().grantNow(spec, s.cluster().now());
        if (d.isRefused() || d.result() == Decision.Result.NOT_NOW) {
            throw Refusal.busy(d.isRefused() ? d.error() : "job " + id + " cannot be granted now: "
                    + d.error());
        }
        return d;
    }

    /**
     * A job granted and on its way to disk: held, announced, answered; its environment file and log line
     * follow the answer (the prolog does not wait for them; the job's JOB_ENTER finds the file).
     */
    private List<Frame> granted(long tid, Job job) {
        devices.hold(job, true);
        s.after.add(() -> log.note(Log.Level.INFO, "job " + job.id() + (job.user().isEmpty() ? "" : " (" + job.user()
                + ")") + " granted " + job.env()));
        publish("grant", job, () -> Views.job(job).put("event", "grant"));
        return List.of(JobAnswer.of(tid, job));
    }

    /**
     * A job whose grant {@link HostState#cluster} already holds (restored, not decided): journaled like a
     * grant, held, announced; false, freeing it in the core again, when it is not on disk.
     */
    public boolean adopt(Job job) {
        try {
            written(JournalRecord.Started.of(job, s.devices.slices(job)), devices.restored(job));
        } catch (Refusal e) {
            return false;
        }
        devices.hold(job);
        publish("grant", job, () -> Views.job(job).put("event", "grant"));
        return true;
    }

    /**
     * A start whose request names global maps: this host's part is decided first (a job that
     * cannot start here costs the authority nothing), its start record written marked PENDING, then the
     * global part is asked of the authority and, while it decides, this host forces its record: the two
     * forced writes overlap. Only when both are granted is the job answered; the authority's answer is
     * recorded without a force of its own (the authority holds it durably; a host that lost it learns it
     * at its next connect, {@code PendingStarts}). Refused by the authority: this host's part is freed,
     * so that a job never holds half a grant.
     */
    private List<Frame> startWithGlobalPart(long tid, JobId jobId, String user, String request, int slots, JobSpec spec,
                                            String globalRequest) throws Refusal {
        JobId id = jobId;
        Decision d = grantNow(spec, id);
        HostDevices.Prepared p = devices.prepare(new Job(id, user, request, slots, d.grant(), Grant.NONE, Grant.NONE,
                Map.of(), Map.of()));
        Job local = p.job();
        written(JournalRecord.Started.pending(local, p.slices()), p);
        Grant remote;
        try {
            remote = global.start(jobId, user, slots, globalRequest, this::forced);
        } catch (Refusal e) {
            p.undo(); // its slices and spec too, made before the authority was asked: never half a grant
            try {
                journal.write(new JournalRecord.Ended(id, "authority"));
            } catch (Refusal x) {
                log.note(Log.Level.WARNING, "job " + id + ": " + x.getMessage() + " (its start is resolved "
                        + "with the authority at the next connect)");
            }
            throw e;
        }
        Job job = local.withRemote(remote, s.devices.environment(local.grant().plus(remote)));
        try {
            journal.writeLazily(new JournalRecord.Remote(id, remote));
        } catch (Refusal e) {
            s.pending(id); // learnt again from the authority at the next connect
            log.note(Log.Level.WARNING, "job " + id + ": " + e.getMessage());
        }
        return granted(tid, job);
    }

    /** Forces what was written to the journal ({@link Records#force}: a failure stops rsmapd). */
    public void forced() {
        journal.force();
    }

    /** A start's record written; when it cannot be, the start is undone (not granted: no grant, no spec, no slice). */
    private void written(JournalRecord.Started r, HostDevices.Prepared start) throws Refusal {
        try {
            journal.write(r);
        } catch (Refusal e) {
            start.undo();
            throw e;
        }
    }

    /**
     * Frees the job's grant and removes its policy. A job that holds nothing here ends too (idempotent,
     * a retry after a lost answer, or a job that requested no map); its policy goes by name, also
     * one applied before a restart.
     */
    public void end(JobId id, String why) throws Refusal {
        Job job = s.job(id).orElse(null);
        if (job == null) {
            devices.removePolicy(id);
            return;
        }
        s.after.work(); // a grant's line still waiting comes before its end's; its file is dropped unwritten
        journal.write(new JournalRecord.Ended(id, why)); // forced before the answer, or by the caller
        journal.forceSoon(); // while the grant is freed and its files removed
        boolean keyed = global.agreesGroups() && !s.cluster().groupKeys(id.toString()).isEmpty(); // before the core frees it
        // Its waiting reallocs are answered CANCEL; what it held, taken-away instances included, is free.
        rsmap.realloc.Outcome o = s.reallocs().finish(id.toString(), s.cluster().now());
        devices.ended(id); // its file, spec and policy; then its slices, which no process of the job reaches now
        reallocation.dispatch(o.events());
        if (!job.remote().isEmpty() || keyed) {
            global.end(id); // told now, or as soon as the authority is back
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
     * The first task of a job on a host where its prolog did not run (a slave host of a parallel job): granted
     * here from the request execd spooled for the job's pe tasks ({@link SlaveSpool}), journaled and refused
     * like a JOB_START; empty when the spool holds nothing to grant. Its end is reconciliation's: execd removes
     * the job's {@code active_jobs} directory when the job ends on this host, and no epilog runs here.
     */
    private Optional<Job> slaveStart(long tid, JobId jobId, Session.Peer peer) throws Refusal {
        JobId id = jobId;
        SlaveSpool.Start t = SlaveSpool.read(s.config.execdSpool(), jobId).orElse(null);
        if (t == null) {
            return Optional.empty();
        }
        if (!access.mayQuery(peer, Job.bare(id, t.user()))) {
            throw Refusal.denied("job " + id + " belongs to '" + t.user() + "' (" + t.from()
                    + "), not '" + peer.user() + "'");
        }
        try {
            start(tid, jobId, t.user(), t.request(), t.slots());
        } catch (Refusal e) {
            throw new Refusal(e.kind(), "job " + id + ": pe task on a host where its prolog did not run, "
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
    public List<Frame> enter(long tid, JobId jobId, Session.Peer peer) throws Refusal {
        JobId id = jobId;
        Job job = s.job(id).orElse(null);
        if (job != null && !access.mayQuery(peer, job)) {
            throw Refusal.denied("job " + id + " belongs to '" + job.user() + "', not '" + peer.user() + "'");
        }
        if (peer.pid() <= 0) {
            throw Refusal.denied("the caller's pid is unknown: " + (PeerCredentials.UNAVAILABLE.isEmpty()
                    ? "the kernel did not say" : PeerCredentials.UNAVAILABLE));
        }
        try {
            Optional<String> other = JobCgroups.foreignJob(peer.pid(), id.toString());
            if (other.isPresent()) {
                throw Refusal.denied("process " + peer.pid() + " is in the cgroup of job " + other.get()
                        + ", not of job " + id + "; refused");
            }
        } catch (IOException e) {
            throw Refusal.unavailable("process " + peer.pid() + ": cannot read its cgroups: " + e.getMessage());
        }
        boolean slave = false;
        if (job == null && s.bare.of(id).isEmpty() && s.config.execdSpool() != null) {
            job = slaveStart(tid, jobId, peer).orElse(null);
            slave = job != null;
        }
        if (job == null) {
            job = s.bare.of(id).orElse(Job.bare(id, peer.user()));
        }
        DevicePolicy policy = devices.policy(job);
        try {
            devices.enter(job, policy, peer.pid()).ifPresent(w -> log.note(Log.Level.WARNING, w));
        } catch (DevicePolicyException e) {
            if (slave) { // granted for this task alone, which does not run: given back now
                end(id, "unenforceable");
            }
            throw Refusal.unavailable("job " + id + ": device isolation cannot be enforced: " + e.getMessage());
        }
        Instant start = ProcessHandle.of(peer.pid()).flatMap(p -> p.info().startInstant()).orElse(null);
        Job entered = job.withPid(peer.pid(), start);
        if (!s.holds(id)) {
            s.bare.entered(entered);
            log.note(Log.Level.INFO, "job " + id + " holds nothing here: process " + peer.pid() + " entered under "
                    + (policy.isOpen() ? "no device policy (no map lists devices)" : "a closed policy with no granted device"));
            return List.of(JobAnswer.of(tid, entered));
        }
        journal.write(new JournalRecord.Entered(id, peer.pid(), Optional.ofNullable(start)));
        devices.hold(entered);
        s.after.settle(); // a slave host's grant just made: its file is there before the job's process runs
        // RSMAP_CDI_DEVICE in the lines only, not in the STATE JSON (docs/protocol.md, JOB_ENTER)
        return List.of(JobAnswer.of(tid, entered, devices.entering(entered).env()));
    }
}
