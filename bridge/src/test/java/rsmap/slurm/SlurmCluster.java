// A real one-node Slurm cluster for tests and timing: munged, slurmctld, slurmd with the rsmap SPANK
// plugin, and rsmapd with the cgroup v1 device backend, all children of this JVM, all stopped by pid.
package rsmap.slurm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import rsmap.daemon.NvmlHost;
import rsmap.daemon.RealCluster;
import rsmap.wire.Polls;
import rsmap.wire.Ports;

/**
 * The cluster of the Slurm integration's integration test: node {@code hostname -s} (address 127.0.0.1) with 4 CPUs,
 * {@code PrologFlags=Contain}, proctrack and task cgroup v1 ({@code ConstrainDevices=no}: rsmapd owns the
 * devices controller), private munge socket and free ports, job ids from a random {@code FirstJobId} so
 * that the device cgroups {@code rsmap/<job>} of this run name no one else's. rsmapd serves two fake GPUs
 * (mknod c 195 0 and 1, no driver: opening one gives ENXIO), each shared four ways:
 * {@code gpu0} is an A100, {@code gpu1} an H100.
 */
final class SlurmCluster extends RealCluster {
    static final Path SPANK = Path.of("target", "spank_rsmap.so").toAbsolutePath();
    /** The plugin's bound on each call to rsmapd (plugstack.conf timeout=), seconds. */
    static final int SPANK_TIMEOUT = 5;
    private static final String[] COMMANDS = {"munged", "mungekey", "slurmctld", "slurmd", "srun", "sbatch",
        "scancel", "squeue", "sinfo", "scontrol", "runuser", "mknod"};

    final String node = hostName("hostname", "-s");
    final int firstJobId = 100_000 + new Random().nextInt(800_000);
    /** The node's rsmapd, for a test that stops it (SIGSTOP) and lets it go on (SIGCONT). */
    private Process nodeDaemon;

    /** What a command said. */
    record Run(int code, String out, String err) {
        List<String> lines(String prefix) {
            return out.lines().filter(l -> l.startsWith(prefix)).toList();
        }
    }

    /** The stand-in GPU host (its description, dev/) when rsmapd builds {@code gpu} from discovery, else null. */
    private final NvmlHost nvml;
    /** job_submit.lua and what it asks the authority with. */
    final SubmitScript submit;

    private SlurmCluster(Path dir, boolean discovered) {
        super("slurm-cluster", dir);
        this.nvml = discovered ? new NvmlHost(dir) : null;
        this.submit = new SubmitScript(dir, dir.resolve("authority.sock"));
    }

    /**
     * Skips a test whose machine lacks what the cluster needs, saying what; under CI=true fails instead
     * (.ci/run installs the packages and runs as root).
     */
    static void requirePrerequisites() {
        List<String> missing = new ArrayList<>();
        if (!"root".equals(System.getProperty("user.name"))) {
            missing.add("root");
        }
        for (String c : COMMANDS) {
            if (Stream.of("/usr/sbin", "/usr/bin", "/sbin", "/bin").noneMatch(d -> Files.isExecutable(Path.of(d, c)))) {
                missing.add(c);
            }
        }
        if (!Files.isRegularFile(SPANK)) {
            missing.add(SPANK + " (built only where slurm/spank.h is: libslurm-dev)");
        }
        if (!Files.isRegularFile(SubmitScript.MODULE)) {
            missing.add(SubmitScript.MODULE + " (built only where Lua 5.1's lua.h is: liblua5.1-0-dev)");
        }
        if (!Files.isRegularFile(Path.of("/sys/fs/cgroup/devices/devices.allow"))
                || !Files.isDirectory(Path.of("/sys/fs/cgroup/freezer"))) {
            missing.add("cgroup v1 devices and freezer controllers under /sys/fs/cgroup");
        }
        require(missing, "a real Slurm cluster needs " + String.join(", ", missing)
                + " (apt-get install slurmctld slurmd slurm-client munge libslurm-dev liblua5.1-0-dev)");
    }

    /** Starts munged, rsmapd, slurmctld and slurmd, and waits for an idle node. */
    static SlurmCluster start() throws IOException, InterruptedException {
        return start(false);
    }

    /**
     * With {@code discovered}, rsmapd builds {@code gpu} from the stand-in NVML instead (docs/gpus.md): two
     * cards, {@link rsmap.daemon.GpuStub#uuid} 0 and 1, at the same fake nodes, ids 0 and 1, four shares each.
     */
    static SlurmCluster start(boolean discovered) throws IOException, InterruptedException {
        requirePrerequisites();
        Path dir = Files.createTempDirectory("rsmap-slurm");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x")); // jobs run as nobody
        return started(new SlurmCluster(dir, discovered));
    }

    @Override
    protected void startAll() throws IOException, InterruptedException {
        // rsmap-spool/active_jobs exists before rsmapd starts, as the tmpfiles.d line of
        // docs/integration-slurm.md makes it at boot (an execd_spool without it stops rsmapd).
        for (String d : new String[] {"state", "spool", "log", "rsmap-spool/active_jobs", "dev"}) {
            Files.createDirectories(dir.resolve(d));
        }
        makeWorkAndDevices();
        // munged (nobody's srun reaches its socket) and the cluster's authority, to which the node's rsmapd
        // registers its attributes; job_submit.lua's rsmap place asks it.
        Files.copy(Path.of("..", "examples", "complexes"), dir.resolve("complexes"));
        ClusterAuthority authority = startAuthority();
        if (nvml != null) { // rsmapd and rsmap gres-conf (in this JVM) read it at nvmlInit_v2
            try {
                nvml.describe(rsmap.daemon.GpuStub.cards(2));
            } catch (Exception e) {
                throw new IOException("the stand-in NVML: " + e, e);
            }
        }
        writeRsmapd(String.join("\n", authority.hostLines()), "attributes = cpu_speed=2.4GHz");
        nodeDaemon = spawn("rsmapd", rsmapd(dir.resolve("rsmapd.conf")));
        awaitFile(socket(), "rsmapd");
        awaitRegistered(authority.socket());

        writeSlurm(authority.mungeSocket());
        spawn("slurmctld", List.of("slurmctld", "-D", "-f", conf().toString()));
        spawn("slurmd", List.of("slurmd", "-D", "-f", conf().toString()));
        Run s = Polls.retry(Duration.ofSeconds(60), () -> run(List.of("sinfo", "-h", "-o", "%T"), Map.of()),
                r -> r.code() == 0 && r.out().strip().equals("idle"));
        if (!(s.code() == 0 && s.out().strip().equals("idle"))) {
            throw new IllegalStateException("the node did not become idle: " + s + "\n" + logs());
        }
    }

    Path conf() {
        return dir.resolve("slurm.conf");
    }

    @Override
    public String host() {
        return node;
    }

    private void writeRsmapd(String... more) throws IOException {
        String gpu = gpuMap(this::device);
        String discovery = nvml == null ? "nvml_library = off" : String.join("\n", nvml.settings()) + "\ngpu_shares = 4";
        Files.writeString(dir.resolve("rsmapd.conf"), String.join("\n",
                "complexes = complexes",
                "host = " + node,
                "complex_values = " + (nvml == null ? gpu + "," : "") + "nic=2(ib0 ib1)", discovery,
                "socket = rsmapd.sock",
                "socket_group = root", // the plugin talks to rsmapd as root (prolog, task, epilog), and
                "socket_mode = 0666", // rsmap-shell inside the jobs as their owner
                "state_dir = rsmap-state", "realloc_max_grow = 8", "cdi_dir = cdi",
                "device_backend = cgroup-v1",
                "execd_spool = rsmap-spool", // the plugin's job marks: rsmap-spool/active_jobs/<job>.1
                "reconcile_interval = 5", String.join("\n", more)) + "\n");
    }

    /**
     * gres.conf from {@code rsmap gres-conf} on rsmapd's configuration, and the slurm.conf lines it prints
     * in comments: key (GresTypes, Gres) to value.
     */
    private Map<String, String> writeGres() throws IOException {
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        int code = rsmap.cli.Main.run(new java.io.PrintWriter(out), new java.io.PrintWriter(err), "gres-conf",
                "--config", dir.resolve("rsmapd.conf").toString());
        if (code != 0) {
            throw new IllegalStateException("rsmap gres-conf exited " + code + ": " + err);
        }
        Files.writeString(dir.resolve("gres.conf"), out.toString());
        Map<String, String> slurmConf = new LinkedHashMap<>();
        for (String l : out.toString().split("\n")) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("# slurm.conf: (?:NodeName=\\S+ \\.\\.\\. )?"
                    + "(GresTypes|Gres)=(\\S+)").matcher(l);
            if (m.matches()) {
                slurmConf.put(m.group(1), m.group(2));
            }
        }
        return slurmConf;
    }

    private void writeSlurm(Path mungeSocket) throws IOException {
        int ctld = Ports.free();
        int slurmd = Ports.free();
        Map<String, String> gres = writeGres();
        submit.write(); // job_submit.lua beside slurm.conf, where slurmctld looks for it
        Files.writeString(conf(), String.join("\n",
                "ClusterName=rsmapci",
                "SlurmctldHost=" + node + "(127.0.0.1)",
                "SlurmUser=root",
                "SlurmdUser=root",
                "SlurmctldPort=" + ctld,
                "SlurmdPort=" + slurmd,
                "AuthType=auth/munge",
                "AuthInfo=socket=" + mungeSocket,
                "CredType=cred/munge",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core", // memory is not scheduled: jobs share the node by cores
                "ProctrackType=proctrack/cgroup",
                "TaskPlugin=task/cgroup",
                "PrologFlags=Contain",
                "PlugStackConfig=" + dir.resolve("plugstack.conf"),
                "StateSaveLocation=" + dir.resolve("state"),
                "SlurmdSpoolDir=" + dir.resolve("spool"),
                "SlurmctldPidFile=" + dir.resolve("slurmctld.pid"),
                "SlurmdPidFile=" + dir.resolve("slurmd.pid"),
                "SlurmctldLogFile=" + dir.resolve("log/slurmctld.log"),
                "SlurmdLogFile=" + dir.resolve("log/slurmd.log"),
                "MailProg=/bin/true",
                "ReturnToService=2",
                "KillWait=5", // a job killed while its step launches is not waited for 30 s
                "FirstJobId=" + firstJobId,
                "SchedulerParameters=sched_interval=1",
                "SlurmdParameters=config_overrides",
                "MpiDefault=none",
                "JobSubmitPlugins=lua", // job_submit.lua beside this file: GRES from --rsmap, --rsmap-filter
                "GresTypes=" + gres.get("GresTypes"),
                "NodeName=" + node + " NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN Gres=" + gres.get("Gres"),
                "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP") + "\n");
        Files.writeString(dir.resolve("cgroup.conf"), "CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\n"
                + "ConstrainDevices=no\n");
        Files.writeString(dir.resolve("plugstack.conf"), "required " + SPANK + " socket=" + socket() + " spool="
                + dir.resolve("rsmap-spool") + " timeout=" + SPANK_TIMEOUT + "\n");
    }

    /** A command as root with SLURM_CONF set. */
    Run run(List<String> command, Map<String, String> env) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(work.toFile());
        pb.environment().put("SLURM_CONF", conf().toString());
        pb.environment().putAll(env);
        return finish(pb, command);
    }

    /**
     * A command as the job user {@code nobody}, in a clean environment (srun and sbatch hand theirs to
     * the job) plus {@code env}.
     */
    Run asNobody(Map<String, String> env, String... command) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("runuser", "-u", "nobody", "--", "env", "-i",
                "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + work, "SLURM_CONF=" + conf()));
        env.forEach((k, v) -> cmd.add(k + "=" + v));
        cmd.addAll(List.of(command));
        return finish(new ProcessBuilder(cmd).directory(work.toFile()), cmd);
    }

    private static Run finish(ProcessBuilder pb, List<String> command) throws IOException, InterruptedException {
        Ran r = RealCluster.finish(pb, command, 120);
        return new Run(r.code(), r.out(), r.err());
    }

    @Override
    protected void mustRun(List<String> command) throws IOException, InterruptedException {
        Run r = finish(new ProcessBuilder(command), command);
        if (r.code() != 0) {
            throw new IllegalStateException(command + " exited " + r.code() + ": " + r.err());
        }
    }

    @Override
    protected Process spawn(String name, List<String> command) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("log").resolve(name + ".out").toFile());
        pb.environment().put("SLURM_CONF", conf().toString());
        pb.environment().putAll(submit.environment()); // job_submit.lua's
        if (nvml != null) {
            pb.environment().put("RSMAP_NVML_STUB", nvml.description().toString()); // rsmapd's NVML
        }
        return daemon(pb.start()); // munged, the authority, rsmapd, slurmctld, slurmd
    }

    /** Every log of the cluster, for a failure message. */
    @Override
    public String logs() throws IOException {
        StringBuilder b = new StringBuilder();
        try (Stream<Path> s = Files.list(dir.resolve("log"))) {
            for (Path p : s.sorted().toList()) {
                List<String> lines = Files.readAllLines(p, StandardCharsets.ISO_8859_1);
                b.append("==> ").append(p.getFileName()).append(" <==\n");
                lines.subList(Math.max(0, lines.size() - 40), lines.size()).forEach(l -> b.append(l).append('\n'));
            }
        }
        return b.toString();
    }

    /** Sends the node's rsmapd {@code signal} (STOP, CONT). */
    void signalRsmapd(String signal) throws IOException, InterruptedException {
        mustRun(List.of("kill", "-" + signal, Long.toString(nodeDaemon.pid())));
    }

    /** Cancels every job, stops every daemon by its pid, removes the cgroups and files of this run. */
    @Override
    protected void stop() {
        try {
            if (!noDaemons() && Files.exists(conf())) {
                run(List.of("scancel", "--partition=debug"), Map.of());
                Polls.await(Duration.ofSeconds(10), () -> run(List.of("squeue", "-h"), Map.of()).out().isBlank());
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            System.err.println("slurm cluster: cancelling jobs: " + e);
        }
        stopDaemons(true); // slurmd, slurmctld, rsmapd, the authority, munged
        // Job processes Slurm left (slurmstepd survives slurmd), then the cgroups of this node and run.
        List<Path> cgroups = new ArrayList<>();
        try (Stream<Path> controllers = Files.list(Path.of("/sys/fs/cgroup"))) {
            for (Path c : controllers.toList()) {
                cgroups.add(c.resolve("slurm_" + node));
            }
        } catch (IOException e) {
            System.err.println("slurm cluster: listing cgroup controllers: " + e);
        }
        for (int id = firstJobId; id < firstJobId + 1000; id++) {
            cgroups.add(Path.of("/sys/fs/cgroup/devices/rsmap", Integer.toString(id)));
        }
        for (Path top : cgroups) {
            removeCgroup(top, "slurm cluster");
        }
        rsmap.daemon.Trees.deleteOrSay(dir, "slurm cluster");
    }
}
