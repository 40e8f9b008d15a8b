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
import rsmap.journal.Journal;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.PeerCredentials;
import rsmap.wire.Session;

/** Called under the daemon's lock, with arguments already checked ({@link Commands}). */
final class JobLifecycle {
    private final HostState s;
    private final Journal journal;
    private final Isolation isolation;
    private final EventHub events;
    private final LogBook log;
    private final Access access;
    private final Reallocation reallocation;
    private final EnvFiles envFiles;
    /** The host's authority of the global maps (issue 14); null without one. */
    AuthorityLink link;
    /** What a job's policy becomes at its end: removed, or closed while processes are left in it. */
    final Leftovers leftovers;

    JobLifecycle(HostState s, Journal journal, Isolation isolation, EventHub events, LogBook log, Access access,
                 Reallocation reallocation, EnvFiles envFiles) {
        this.s = s;
        this.journal = journal;
        this.isolation = isolation;
        this.events = events;
        this.log = log;
        this.access = access;
        this.reallocation = reallocation;
        this.envFiles = envFiles;
        this.leftovers = new Leftovers(s, isolation, log);
    }

    /**
     * Grants the job its instances here, answered by STATE. A retry of the same start (same request, owner
     * and slots, no process entered yet) after a lost answer is answered with the grant already made (hole
     * 6, the idempotent prepare of Kubernetes DRA drivers); anything else for a job that holds a grant is
     * refused. execd already started the job here, so it cannot wait: a grant that is not possible now is
     * refused with the core's reason, and nothing is left behind.
     */
    List<Frame> start(long tid, String id, String user, String request, int slots) throws Session.CommandException {
        Job held = s.jobs.get(id);
        if (held != null) {
            if (held.request().equals(request) && held.user().equals(user) && held.slots() == slots
                    && held.pids().isEmpty()) {
                log.note(Log.Level.INFO, "job " + id + ": JOB_START again (a retry), answered with its grant "
                        + held.env());
                return List.of(answer(tid, held));
            }
            throw new Session.CommandException("job " + id + " already holds " + held.grant().byHost()
                    + "; a second JOB_START is refused (no doubled grants)");
        }
        JobSpec spec;
        String global;
        try {
            s.prepare(s.cluster, id);
            spec = s.spec(id, request, slots);
            global = s.globalPart(request);
        } catch (ParseException e) {
            throw new Session.CommandException("request: " + e.getMessage());
        }
        if (s.bare.containsKey(id)) {
            // Processes entered this job before its prolog: not the order execd keeps, but a process that
            // waits in the job's cgroup for the grant to widen it. It leaves before anything is granted.
            log.note(Log.Level.WARNING, "job " + id + ": processes " + s.bare.get(id).pids().keySet()
                    + " entered before its JOB_START; their policy is removed before the grant");
            removePolicy(id);
        }
        if (!global.isEmpty()) {
            return startWithGlobalPart(tid, id, user, request, slots, spec, global);
        }
        Decision d = grantNow(spec, id);
        Job job = new Job(id, user, request, slots, d.grant(), Grant.NONE, Grant.NONE,
                d.grant().environment(s.host()), Map.of());
        try {
            journal.write(JournalRecord.Started.of(job).line()); // forced before the answer (Commands.handle)
        } catch (IOException e) {
            s.cluster.finish(id, s.cluster.now()); // not on disk: not granted
            throw new Session.CommandException("journal: " + e.getMessage());
        }
        return granted(tid, job);
    }

    /** The core decides now or says why not; nothing is queued (execd already started the job here). */
    private Decision grantNow(JobSpec spec, String id) throws Session.CommandException {
        Decision d = s.cluster.grantNow(spec, s.cluster.now());
        if (d.isRefused() || d.result() == Decision.Result.NOT_NOW) {
            throw new Session.CommandException(d.isRefused() ? d.error() : "job " + id + " cannot be granted now: "
                    + d.error());
        }
        return d;
    }

    /** A job granted and on its way to disk: held, announced, answered. */
    private List<Frame> granted(long tid, Job job) {
        s.jobs.put(job.id(), job);
        s.changed();
        if (!s.config.isAuthority()) { // an authority runs no job: nothing reads an environment file there
            envFiles.write(job.id(), job.user(), job.env());
        }
        log.note(Log.Level.INFO, "job " + job.id() + (job.user().isEmpty() ? "" : " (" + job.user() + ")") + " granted "
                + job.env());
        publish("grant", job, () -> Views.job(job).put("event", "grant"));
        return List.of(answer(tid, job));
    }

    /**
     * On an authority (issue 14): holds exactly {@code grant} for job {@code id} (HOST:JOB) that a host says
     * it holds and this authority does not know (its state was lost), when those instances are free;
     * journaled like a grant, ended by the job's JOB_END. False, changing nothing, when they are not free.
     */
    boolean hold(String id, Grant grant) {
        if (grant.isEmpty() || s.jobs.containsKey(id)) {
            return false;
        }
        StringBuilder request = new StringBuilder();
        grant.byHost().values().forEach(maps -> maps.forEach((map, ids) -> request.append(request.length() == 0 ? ""
                : ",").append(map).append('=').append(ids.size())));
        try {
            s.prepare(s.cluster, id);
            Decision d = s.cluster.restore(s.spec(id, request.toString(), 1), grant, s.cluster.now());
            if (d.isRefused()) {
                return false;
            }
            Job job = new Job(id, "", request.toString(), 1, grant, Grant.NONE, Grant.NONE,
                    grant.environment(s.host()), Map.of());
            try {
                journal.write(JournalRecord.Started.of(job).line());
            } catch (IOException e) {
                s.cluster.finish(id, s.cluster.now());
                return false;
            }
            s.jobs.put(id, job);
            s.changed();
            publish("grant", job, () -> Views.job(job).put("event", "grant"));
            return true;
        } catch (ParseException e) {
            return false;
        }
    }

    /**
     * A start whose request names global maps (issue 14): this host's part is decided first (a job that
     * cannot start here costs the authority nothing), its start record written marked PENDING, then the
     * global part is asked of the authority and, while it decides, this host forces its record: the two
     * forced writes overlap. Only when both are granted is the job answered; the authority's answer is
     * recorded without a force of its own (the authority holds it durably; a host that lost it learns it
     * at its next connect, {@link #resolvePending}). Refused by the authority: this host's part is freed,
     * so that a job never holds half a grant.
     */
    private List<Frame> startWithGlobalPart(long tid, String id, String user, String request, int slots, JobSpec spec,
                                            String global) throws Session.CommandException {
        Decision d = grantNow(spec, id);
        Job local = new Job(id, user, request, slots, d.grant(), Grant.NONE, Grant.NONE,
                d.grant().environment(s.host()), Map.of());
        try {
            journal.write(JournalRecord.Started.pending(local).line());
        } catch (IOException e) {
            s.cluster.finish(id, s.cluster.now()); // not on disk: not granted
            throw new Session.CommandException("journal: " + e.getMessage());
        }
        Grant remote;
        try {
            remote = link.start(id, user, slots, global, this::forced);
        } catch (Session.CommandException e) {
            s.cluster.finish(id, s.cluster.now());
            try {
                journal.write(new JournalRecord.Ended(id, "authority").line());
            } catch (IOException x) {
                log.note(Log.Level.WARNING, "job " + id + ": journal: " + x.getMessage() + " (its start is resolved "
                        + "with the authority at the next connect)");
            }
            throw e;
        }
        Job job = local.withRemote(remote, s.host());
        try {
            journal.writeLazily(new JournalRecord.Remote(id, remote).line());
        } catch (IOException e) {
            s.remotePending.add(id); // learnt again from the authority at the next connect
            log.note(Log.Level.WARNING, "job " + id + ": journal: " + e.getMessage());
        }
        return granted(tid, job);
    }

    /**
     * Forces what was written to the journal (group commit: for all the commands waiting, and while the
     * authority decides a global part). A journal that cannot be forced leaves the core ahead of the disk:
     * rsmapd stops, and its restart goes on from the journal (no client saw the answer).
     */
    void forced() {
        try {
            journal.sync();
        } catch (IOException e) {
            log.note(Log.Level.ERROR, "journal: " + e.getMessage() + ": rsmapd stops; its restart continues from the"
                    + " journal, which may not hold the last changes (none of them was answered)");
            Runtime.getRuntime().halt(75);
        }
    }

    /**
     * What the authority said of the jobs whose global part this host did not have on disk (issue 14):
     * a grant it holds is the job's (recorded, forced, its environment rewritten); none means the job's
     * start never completed (its JOB_START was not answered OK), and the job ends here. Under the daemon's lock.
     */
    void resolvePending(Map<String, Optional<Grant>> said) {
        said.forEach((id, grant) -> {
            Job job = s.jobs.get(id);
            if (job == null || !s.remotePending.contains(id)) {
                return;
            }
            try {
                if (grant.isPresent()) {
                    Job now = job.withRemote(grant.get(), s.host());
                    journal.write(new JournalRecord.Remote(id, grant.get()).line());
                    forced();
                    s.remotePending.remove(id);
                    s.jobs.put(id, now);
                    s.changed();
                    envFiles.write(id, now.user(), now.env());
                    log.note(Log.Level.INFO, "job " + id + ": the authority holds its global part " + grant.get().byHost()
                            + ": restored");
                } else {
                    s.remotePending.remove(id);
                    end(id, "its global part was never granted");
                    forced();
                    log.note(Log.Level.WARNING, "job " + id + ": the authority holds no global part for it: its start"
                            + " never completed, its grant here is freed");
                }
            } catch (IOException | Session.CommandException e) {
                log.note(Log.Level.ERROR, "job " + id + ": cannot resolve its global part now: " + e.getMessage());
            }
        });
    }

    /** STATE {job, user, grants, env}, then the environment again as NAME=value (the C hook reads no JSON). */
    static Frame answer(long tid, Job job) {
        List<String> args = new ArrayList<>();
        args.add(Views.job(job).toString());
        job.env().forEach((k, v) -> args.add(k + "=" + v));
        return Frame.of(tid, Code.STATE.value(), args.toArray(new String[0]));
    }

    /**
     * Frees the job's grant and removes its policy. A job that holds nothing here ends too (idempotent,
     * hole 6: a retry after a lost answer, or a job that requested no map); its policy goes by name, also
     * one applied before a restart.
     */
    void end(String id, String why) throws Session.CommandException {
        Job job = s.jobs.get(id);
        if (job == null) {
            removePolicy(id);
            return;
        }
        new JournalRecord.Ended(id, why).writeTo(journal); // forced before the answer, or by the caller
        // Its waiting reallocs are answered CANCEL; what it held, taken-away instances included, is free.
        rsmap.realloc.Outcome o = s.reallocs.finish(id, s.cluster.now());
        s.jobs.remove(id);
        s.changed();
        removePolicy(id);
        if (!s.config.isAuthority()) {
            envFiles.remove(id);
        }
        reallocation.dispatch(o.events());
        if (!job.remote().isEmpty()) {
            link.end(id); // when it cannot be told now, the next reconciliation with it frees them
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
        s.bare.remove(id);
        leftovers.ended(id);
    }

    /**
     * The starter: puts the calling process (its pid from SO_PEERCRED, never from the message) under the
     * job's device policy, and answers the job's environment like JOB_START. Only root, the admin or the
     * job's owner may, and never for a process inside another job's cgroup: that could widen what the
     * other job reaches. A job that holds nothing here is entered too, under a closed policy that grants
     * no device (hole 2: the starter fails closed, as flux-core's gpubind hides every GPU from a job
     * granted none); only hosts whose maps list no devices, or isolation = off, leave it unrestricted.
     */
    List<Frame> enter(long tid, String id, Session.Peer peer) throws Session.CommandException {
        Job job = s.jobs.get(id);
        if (job == null) {
            job = s.bare.getOrDefault(id, Job.bare(id, peer.user()));
        } else if (!access.mayQuery(peer, job)) {
            throw new Session.CommandException("job " + id + " belongs to '" + job.user() + "', not '" + peer.user() + "'");
        }
        if (peer.pid() <= 0) {
            throw new Session.CommandException("the caller's pid is unknown: " + (PeerCredentials.UNAVAILABLE.isEmpty()
                    ? "the kernel did not say" : PeerCredentials.UNAVAILABLE));
        }
        try {
            Optional<String> other = JobCgroups.foreignJob(peer.pid(), id);
            if (other.isPresent()) {
                throw new Session.CommandException("process " + peer.pid() + " is in the cgroup of job " + other.get()
                        + ", not of job " + id + "; refused");
            }
        } catch (IOException e) {
            throw new Session.CommandException("process " + peer.pid() + ": cannot read its cgroups: " + e.getMessage());
        }
        DevicePolicy policy = DevicePolicy.of(s.grantedInstances(job), s.devicesListed());
        try {
            isolation.apply(id, policy, peer.pid()).ifPresent(w -> log.note(Log.Level.WARNING, w));
        } catch (DevicePolicyException e) {
            throw new Session.CommandException("job " + id + ": device isolation cannot be enforced: " + e.getMessage());
        }
        Instant start = ProcessHandle.of(peer.pid()).flatMap(p -> p.info().startInstant()).orElse(null);
        Job entered = job.withPid(peer.pid(), start);
        if (!s.jobs.containsKey(id)) {
            s.bare.put(id, entered);
            log.note(Log.Level.INFO, "job " + id + " holds nothing here: process " + peer.pid() + " entered under "
                    + (policy.isOpen() ? "no device policy (no map lists devices)" : "a closed policy with no granted device"));
            return List.of(answer(tid, entered));
        }
        new JournalRecord.Entered(id, peer.pid(), Optional.ofNullable(start)).appendTo(journal);
        s.jobs.put(id, entered);
        return List.of(answer(tid, entered));
    }
}
