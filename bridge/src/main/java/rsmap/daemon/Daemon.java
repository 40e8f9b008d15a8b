// rsmapd's composition root: the allocation state of this host, kept in the journal, served over the
// agent protocol; it wires the rooms below and owns the one lock they run under.
package rsmap.daemon;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Grant;
import rsmap.complex.ComplexTable;
import rsmap.daemon.authority.Authority;
import rsmap.daemon.authority.GlobalKeys;
import rsmap.daemon.authority.JobKeys;
import rsmap.daemon.authority.Lease;
import rsmap.daemon.authority.Standby;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.Discovery;
import rsmap.daemon.config.HostAuth;
import rsmap.daemon.devices.CdiSpecs;
import rsmap.daemon.devices.EnvFiles;
import rsmap.daemon.devices.GpuHost;
import rsmap.daemon.devices.HostDeviceViews;
import rsmap.daemon.devices.HostDevices;
import rsmap.daemon.devices.MigHost;
import rsmap.daemon.health.Health;
import rsmap.daemon.health.HealthWatch;
import rsmap.daemon.job.EventHub;
import rsmap.daemon.job.Generations;
import rsmap.daemon.job.GlobalPart;
import rsmap.daemon.job.JobLifecycle;
import rsmap.daemon.job.Reallocation;
import rsmap.daemon.job.Reconciliation;
import rsmap.daemon.job.Recovery;
import rsmap.daemon.link.AuthorityLink;
import rsmap.daemon.link.Failover;
import rsmap.daemon.link.PendingStarts;
import rsmap.daemon.records.Records;
import rsmap.daemon.records.StateDirTrust;
import rsmap.daemon.records.StateLock;
import rsmap.daemon.state.Access;
import rsmap.daemon.state.AfterAnswer;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.Scope;
import rsmap.journal.Journal;
import rsmap.log.LogBook;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.ServerLimits;
import rsmap.wire.Session;
import rsmap.wire.SocketServer;
import rsmap.daemon.state.JobId;

/**
 * The daemon of one execution host, in rooms (docs/architecture.md):
 * <ul>
 *   <li>{@link Preflight} checks the configuration before anything is touched;</li>
 *   <li>{@link Recovery} replays the journal ({@code JournalRecord}) into the {@link HostState};</li>
 *   <li>{@link Commands} dispatches each command to its handler, {@link Access} judges the peer;</li>
 *   <li>{@link JobLifecycle} starts, enters and ends jobs; {@link Reallocation} grows and shrinks running
 *   jobs; {@link Generations} reloads the configuration;</li>
 *   <li>{@link Reconciliation} frees what jobs that ended without an epilog hold.</li>
 * </ul>
 * Every grant and release is in the journal, forced to disk, before the answer goes out. Commands run
 * one at a time under {@link #lock}; the socket serves clients concurrently.
 */
public final class Daemon implements AutoCloseable {
    /** The one lock of the state: commands and reconciliation run under it. */
    private final Object lock = new Object();
    private final Config config;
    private final HostState state;
    private final Access access;
    private final LogBook log = new LogBook();
    private final EventHub events;
    /** The state directory's lock: a host's {@link StateLock}, an authority's {@link Lease}. */
    private final java.io.Closeable stateLock;
    private final Journal journal;
    private final Commands commands;
    /** A host's starts whose global part was not on disk: settled by what its authority says at a connect. */
    private final PendingStarts pending;
    private final Reconciliation reconciliation;
    private final Preflight preflight;
    /** Instances' health (docs/health.md): DRAIN, NVML's events, the site's check. */
    private final Health health;
    private HealthWatch watch;
    private SocketServer server;
    private ScheduledExecutorService timer;
    /** The host's global part: none, or the link to its authority; none on an authority. */
    private final GlobalPart global;
    /** The authority's checker of the hosts' credentials, served on {@code listen}; empty on a host. */
    private final Optional<rsmap.wire.Authenticator> authenticator;

    /** Builds the state from the configuration and the journal. */
    public Daemon(Config config, ComplexTable table) throws ParseException, IOException {
        this(config, table, null);
    }

    /**
     * The same, remembering the file the configuration came from for RELOAD ({@code null}: RELOAD
     * is refused).
     */
    public Daemon(Config config, ComplexTable table, Path configFile) throws ParseException, IOException {
        this(config, table, configFile, Discovery.system(), HostAuth.MUNGE);
    }

    /** The same, with the host's attributes discovered by {@code discovery} (tests: fake /proc files). */
    Daemon(Config config, ComplexTable table, Path configFile, Discovery discovery) throws ParseException, IOException {
        this(config, table, configFile, discovery, HostAuth.MUNGE);
    }

    /**
     * The same, hosts and their authority proving who connects by {@code auth} (MUNGE; tests another way).
     * The role is read here, once: it chooses the rooms (docs/architecture.md, "Roles") - an execution host
     * gets its {@link HostCommands}, its environment files, its attributes and a {@link GlobalPart} (none,
     * or the {@link AuthorityLink}); an authority its {@link AuthorityCommands} over {@link Authority}, the
     * TCP listener and no device isolation. Nothing is wired later.
     */
    Daemon(Config config, ComplexTable table, Path configFile, Discovery discovery, HostAuth auth)
            throws ParseException, IOException {
        this(config, table, configFile, discovery, auth, null);
    }

    /**
     * The same; an authority serves with {@code lease} (taken by its {@link Standby}), or, when null, takes
     * its state directory's lease now or is refused.
     */
    Daemon(Config config, ComplexTable table, Path configFile, Discovery discovery, HostAuth auth, Lease lease)
            throws ParseException, IOException {
        this(config, table, configFile, discovery, auth, lease, CdiSpecs.FaultPoint.NONE);
    }

    /** The same, the CDI specs stopping at {@code cdiFaults} (a crash test's daemon, FaultingMain). */
    Daemon(Config config, ComplexTable table, Path configFile, Discovery discovery, HostAuth auth, Lease lease,
           CdiSpecs.FaultPoint cdiFaults) throws ParseException, IOException {
        boolean authorityRole = config.isAuthority();
        // A host's GPUs first: gpu_map built from NVML is part of complex_values from here on (docs/gpus.md).
        MigHost mig = authorityRole ? MigHost.none() : new MigHost(config.stateDir(), log); // slices (mig_map)
        GpuHost.Reader gpuReader = authorityRole ? GpuHost.Reader.NONE
                : mig.reader(GpuHost.Reader.host(table, configFile, log), table, configFile);
        GpuHost.Filled gpus = gpuReader.read(config);
        config = gpus.config();
        this.config = config;
        this.access = new Access(config.adminUser(), config.daemonUser());
        this.preflight = new Preflight(config, configFile);
        preflight.daemonUser();
        preflight.spool();
        // What a grant makes on the host, each part for this role (an authority runs no job: none).
        HostDevices.Parts parts = authorityRole ? HostDevices.Parts.none()
                : new HostDevices.Parts(new EnvFiles(config.stateDir(), log), new CdiSpecs(config.cdi(), log, cdiFaults),
                mig, preflight.isolation(log));
        HostDeviceViews views = new HostDeviceViews(config.host(), gpus.gpus(), mig);
        this.state = new HostState(config, table, Scope.of(config), new AfterAnswer(parts.envFiles()), views);
        HostDevices devices = new HostDevices(state, views, parts, log);
        if (!authorityRole) {
            state.describe(config.discover() ? withGpus(discovery.discover(), gpus.gpus())
                    : new Discovery.Result(Map.of(), List.of()), log);
        }
        preflight.values(state);
        this.authenticator = authorityRole ? Optional.of(preflight.authenticator(auth)) : Optional.empty();
        Config linked = config;
        this.global = config.authority() == null ? GlobalPart.NONE : new AuthorityLink(config.authority().toString(),
                new Failover(config.authority(), () -> auth.credential(linked), config.maxFrame()), state, lock, log, access,
                this::resolvePending);
        this.events = new EventHub(global);
        // Before the journal and the socket: a second daemon on this state must touch neither.
        StateDirTrust.check(config.stateDir(), config.daemonUser());
        Lease held = !authorityRole ? null : lease != null ? lease : Standby.takeNow(config);
        this.stateLock = held != null ? held : StateLock.acquire(config.stateDir());
        Journal opened = null;
        try {
            opened = Journal.open(config.stateDir().resolve("journal"));
            Records records = held == null ? new Records(opened, log) : new Records(opened, log, held);
            Reallocation reallocation = new Reallocation(state, devices, records, events, log, access);
            Generations generations = new Generations(state, devices, records, events, log, configFile, reallocation,
                    gpuReader);
            Recovery.recover(state, opened, config.stateDir().resolve("journal"), generations, log,
                    held == null ? 0 : held.epoch());
            // what a lost or older mig.json forgot, what a kill left out of step: every part before anything is served
            devices.started();
            JobKeys keys = authorityRole ? new JobKeys(state, records, log) : null;
            // An authority's hosts' global parts of one job are held to one group (docs/cluster.md).
            JobLifecycle lifecycle = new JobLifecycle(state, devices, records, events, log, access, reallocation,
                    authorityRole ? new GlobalKeys(keys, log) : global);
            this.pending = new PendingStarts(state, devices, records, lifecycle, log);
            this.health = new Health(state, records, events, log, access, reallocation);
            mig.onFailedCreation(health::creationFailed); // the card tainted, source mig (docs/health.md)
            CommonCommands common = new CommonCommands(state, access, events, lifecycle, generations, reallocation,
                    health);
            Commands.Table handlers = authorityRole
                    ? AuthorityCommands.table(common, state, lifecycle, new Authority(state, lifecycle, log),
                    keys, access, lock, held)
                    : HostCommands.table(common, state, lifecycle, global);
            this.commands = new Commands(handlers, state, access, global, records, lock);
            this.reconciliation = new Reconciliation(state, devices, lifecycle, log);
            this.journal = opened;
        } catch (IOException | ParseException | RuntimeException e) {
            if (opened != null) {
                opened.close();
            }
            stateLock.close();
            throw e;
        }
    }

    /** The discovered attributes and the GPU ones NVML gave. */
    private static Discovery.Result withGpus(Discovery.Result found, GpuHost gpus) {
        Map<String, String> all = new java.util.LinkedHashMap<>(found.attributes());
        all.putAll(gpus.attributes());
        return new Discovery.Result(all, found.problems());
    }

    /** What the authority said of this host's pending starts at a connect; its link calls it under the lock. */
    private void resolvePending(Map<JobId, Optional<Grant>> said) {
        pending.resolve(said);
    }

    /** Starts serving on the configured socket, and reconciling every {@code reconcile_interval}. */
    public Daemon serve() throws IOException {
        return serve(limits());
    }

    /** The same within {@code limits} instead of {@link #limits()}'s (a test's smaller budget). */
    Daemon serve(ServerLimits limits) throws IOException {
        SocketServer.Builder b = SocketServer.builder(() -> new Session.Handler() {
            @Override
            public List<Frame> handle(Code code, Frame command, Session session) throws Session.CommandException {
                return commands.handle(code, command, session);
            }

            @Override
            public List<Frame> quick(Code code, Frame command, Session session) {
                return commands.quick(code, command, session);
            }

            @Override
            public void answered(Session session) {
                commands.answered();
            }

            @Override
            public void closed(Session session) {
                commands.closed(session);
            }
        }).unix(config.socket(), config.socketGroupIfPresent(), config.socketMode()).limits(limits)
                .privileged(access::privileged);
        authenticator.ifPresent(a -> b.tcp(config.listen().address(), a));
        // Before the socket serves: a card NVML reports sick is tainted before any JOB_START can take it
        // (NVML's taints are not journaled; the restart learns them from the card, docs/health.md).
        watch = new HealthWatch(state, health, lock, log).start();
        try {
            server = b.start();
        } catch (IOException e) {
            watch.close();
            String key = authenticator.isPresent() && Files.exists(config.socket()) ? "listen" : "socket";
            throw new IOException(preflight.where(key) + ": cannot serve " + (key.equals("listen") ? config.listen()
                    : config.socket()) + ": " + reason(e), e);
        }
        global.start();
        reconcile();
        if (config.reconcileInterval() > 0) {
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "rsmapd-reconcile");
                t.setDaemon(true);
                return t;
            });
            timer.scheduleWithFixedDelay(this::reconcile, config.reconcileInterval(), config.reconcileInterval(),
                    TimeUnit.SECONDS);
        }
        return this;
    }

    /** The server's budget against a flood from job owners, from rsmapd.conf. */
    ServerLimits limits() {
        // An authority's commands mostly wait for the journal's force: more workers, larger commit groups.
        return ServerLimits.defaults(config.maxFrame()).withWorkers(authenticator.isPresent() ? Authority.WORKERS
                : ServerLimits.DEFAULT_WORKERS).withPerUserConnections(config.maxConnectionsPerUser())
                .withIdleTimeout(Duration.ofSeconds(config.idleTimeout()))
                .withFrameTimeout(Duration.ofSeconds(config.frameTimeout()));
    }

    /** What went wrong with a file, in words: the JDK says only the path for some. */
    private static String reason(IOException e) {
        if (e instanceof FileSystemException f) {
            String kind = f instanceof AccessDeniedException ? "permission denied"
                    : f instanceof NoSuchFileException ? "no such file or directory"
                    : f instanceof FileAlreadyExistsException ? "exists and is not a directory"
                    : f.getReason() != null ? f.getReason() : e.getClass().getSimpleName();
            return (f.getFile() == null ? "" : f.getFile() + ": ") + kind;
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /**
     * Releases the grants of jobs that no longer exist (see {@link Reconciliation}); runs at start and
     * every {@code reconcile_interval}.
     */
    public void reconcile() {
        synchronized (lock) {
            reconciliation.run();
        }
        commands.synced();
    }

    public Cluster cluster() {
        synchronized (lock) {
            return state.cluster();
        }
    }

    /** The latest lines the daemon logged (also on stderr), for tests. */
    public List<String> log() {
        return log.lines();
    }

    /** One command as a session would send it, for tests and the in-process demo. */
    public List<Frame> handle(Code code, Frame command, Session session) throws Session.CommandException {
        return commands.handle(code, command, session);
    }

    /** What the selector thread would answer at once to {@code command} (Session.Handler#quick), or null. */
    List<Frame> quick(Code code, Frame command, Session session) {
        return commands.quick(code, command, session);
    }

    /** How many reallocs wait now (tests). */
    int waitingReallocs() {
        synchronized (lock) {
            return state.reallocs().waiting().size();
        }
    }

    /** A session ended, as the server says it (tests' sessions). */
    void closed(Session session) {
        commands.closed(session);
    }

    /** A command's answers were sent ({@link Commands#answered}). */
    void answered() {
        commands.answered();
    }

    // --- for Views and tests in this package ---

    HostState state() {
        return state;
    }

    /** The lines logged lately, oldest first. */
    List<String> logged() {
        return log.lines();
    }

    Access access() {
        return access;
    }

    /** The jobs holding grants, by id, in the order they were granted. */
    public Map<String, Job> jobs() {
        synchronized (lock) {
            Map<String, Job> jobs = new java.util.LinkedHashMap<>();
            state.jobs().forEach(j -> jobs.put(j.id().toString(), j)); // as the wire names them
            return jobs;
        }
    }

    long generation() {
        return state.generation();
    }

    /** The socket's path, once serving. */
    public Path socket() {
        return server.path();
    }

    /** The authority's TCP address once serving (its {@code listen}, with the port bound). */
    public java.net.InetSocketAddress tcpAddress() {
        return server.tcpAddress();
    }

    @Override
    public void close() throws IOException {
        if (timer != null) {
            timer.shutdownNow();
        }
        if (watch != null) {
            watch.close();
        }
        global.close();
        try {
            if (server != null) {
                server.close();
            }
            commands.answered(); // the files of the last answers
            journal.close();
        } finally {
            stateLock.close();
        }
    }
}
