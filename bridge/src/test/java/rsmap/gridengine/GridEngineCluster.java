// A real one-host Grid Engine cell for tests: qmaster and execd of a release (Son of Grid Engine 8.1 from
// the distribution, Open Cluster Scheduler 9.1 built by .ci/build-ocs.sh), configured for rsmapd with qconf
// from files (src/test/resources/gridengine), and rsmapd with the cgroup v1 device backend.
package rsmap.gridengine;

import java.io.IOException;
import java.net.ServerSocket;
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
import rsmap.daemon.RealCluster;
import rsmap.wire.Polls;

/**
 * Host {@code hostname}, 4 slots, a pe {@code rsmap} ({@code control_slaves TRUE}), {@code gpu} a plain
 * consumable of 8 in the scheduler and a resource map in rsmapd: two fake cards (mknod c 195 0 and 1, no
 * driver: opening one gives ENXIO), each shared four ways, {@code gpu0} an A100, {@code gpu1} an H100; {@code fpga}
 * a map of two instances without devices in rsmapd only (a test may add it to the scheduler). Jobs run
 * as {@code rsmap-job}, a system user with a shell (a pe task runs through the owner's shell). Job ids start
 * at a random number, so that the device cgroups {@code rsmap/<job>} of this run name no one else's.
 */
final class GridEngineCluster extends RealCluster {
    static final String USER = "rsmap-job";
    private static final Path RESOURCES = Path.of("src", "test", "resources", "gridengine").toAbsolutePath();

    final Release release;
    final String host = hostName("hostname");
    final int firstJobId = 100_000 + new Random().nextInt(800_000);
    final String cell = "rsmapit" + firstJobId;
    final int port;
    private ClusterAuthority authority;
    private boolean cellUp;

    /** What a command said. */
    record Run(int code, String out, String err) {
    }

    private GridEngineCluster(Release release, Path dir, int port) {
        super("gridengine-cluster", dir);
        this.release = release;
        this.port = port;
    }

    /** Skips where the release or root or cgroup v1 is missing; under CI=true fails instead (.ci/run provides them). */
    static void requirePrerequisites(Release release) {
        List<String> missing = new ArrayList<>();
        if (!"root".equals(System.getProperty("user.name"))) {
            missing.add("root");
        }
        missing.addAll(release.missing());
        for (String c : new String[] {"munged", "mungekey"}) { // the authority's link (RSMAP_FILTER, alternatives)
            if (Stream.of("/usr/sbin", "/usr/bin").noneMatch(d -> Files.isExecutable(Path.of(d, c)))) {
                missing.add(c + " (apt-get install munge)");
            }
        }
        if (!Files.isRegularFile(Path.of("/sys/fs/cgroup/devices/devices.allow"))) {
            missing.add("the cgroup v1 devices controller under /sys/fs/cgroup");
        }
        require(missing, release + " needs " + String.join(", ", missing));
    }

    /** The cell up and configured, rsmapd serving it. */
    static GridEngineCluster start(Release release) throws IOException, InterruptedException {
        requirePrerequisites(release);
        Path dir = Files.createTempDirectory("rsmap-ge");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x")); // the job user's hooks
        return started(new GridEngineCluster(release, dir, freePort()));
    }

    @Override
    protected void startAll() throws IOException, InterruptedException {
        mustRun(List.of("sh", "-c", "id -u " + USER + " >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/sh "
                + USER));
        for (String d : new String[] {"hooks", "dev", "log", "cell"}) {
            Files.createDirectories(dir.resolve(d));
        }
        makeWorkAndDevices();
        Path hooks = dir.resolve("hooks");
        for (String f : new String[] {"rsmap-hook", "rsmap-shell", "rsmap-place"}) {
            Files.copy(Path.of("target", f), hooks.resolve(f));
        }
        Files.createSymbolicLink(hooks.resolve("rsmap-starter"), Path.of("rsmap-hook"));
        Files.copy(Path.of("src", "main", "scripts", "rsmap_jsv.sh"), hooks.resolve("rsmap_jsv.sh"));
        // qmaster runs a JSV in an environment of its own: the settings go in through a wrapper.
        Files.writeString(hooks.resolve("jsv"), String.join("\n", "#!/bin/sh",
                "export RSMAP_PLACE=" + hooks.resolve("rsmap-place"),
                "export RSMAP_HOOK=" + hooks.resolve("rsmap-hook"),
                "export RSMAP_COMPLEXES=" + dir.resolve("complexes"),
                "export RSMAP_AUTHORITY_SOCKET=" + dir.resolve("authority.sock"),
                "exec " + hooks.resolve("rsmap_jsv.sh")) + "\n");
        Files.setPosixFilePermissions(hooks.resolve("jsv"), PosixFilePermissions.fromString("rwxr-xr-x"));
        // rsmapd's complex table: the map as RSMAP (the scheduler's own table has no such type, or books
        // the map as a plain consumable), and the instances' characteristics.
        Files.writeString(dir.resolve("complexes"), String.join("\n",
                "#name    shortcut type    relop requestable consumable default urgency",
                "gpu      gpu      RSMAP   <=    YES         HOST       0       0",
                "devices  dev      STRING  ==    YES         NO         NONE    0",
                "model    model    CSTRING ==    YES         NO         NONE    0",
                "fpga     fpga     RSMAP   <=    YES         HOST       0       0") + "\n");

        authority = startAuthority(); // munged and the authority, whose socket the JSV's rsmap place asks
        cell("create");
        cell("qmaster");
        cellUp = true;
        // Before execd starts: execd picks up a changed global configuration (prolog, epilog) only seconds
        // later, and a job started meanwhile would run without them.
        mustRun(List.of(RESOURCES.resolve("configure-cell.sh").toString(), "cell", dir.resolve("cell").toString(), host,
                hooks.toString(), "4"));
        cell("execd");
        mustRun(List.of(RESOURCES.resolve("configure-cell.sh").toString(), "host", dir.resolve("cell").toString(), host));
        // execd's spool is under the name execd resolved for itself (localhost here), not the configured host.
        Path spool;
        try (Stream<Path> s = Files.list(dir.resolve("cell").resolve("execd"))) {
            spool = s.filter(Files::isDirectory).findFirst().orElseThrow(() -> new IllegalStateException(
                    "execd made no spool directory under " + dir.resolve("cell/execd")));
        }
        writeRsmapd(spool);
        spawn("rsmapd", rsmapd(dir.resolve("rsmapd.conf")));
        awaitFile(socket(), "rsmapd");
        awaitRegistered(authority.socket());
    }

    private void cell(String command) throws IOException, InterruptedException {
        mustRun(release.cellCommand(RESOURCES, command, dir.resolve("cell"), cell, port));
    }

    private void writeRsmapd(Path spool) throws IOException {
        Files.writeString(dir.resolve("rsmapd.conf"), String.join("\n",
                "complexes = complexes",
                "host = " + host,
                "complex_values = " + gpuMap(this::device) + ",fpga=2(f0 f1)", // fpga: a map OCS may also assign (its own RSMAP)
                "socket = rsmapd.sock",
                "socket_group = root",
                "socket_mode = 0666", // the starter and rsmap-shell connect as the job's owner
                "state_dir = rsmap-state", "cdi_dir = cdi", // the job specs in the test's folder, not the host's /var/run/cdi
                "device_backend = cgroup-v1",
                "execd_spool = " + spool,
                "attributes = cpu_speed=2.4GHz", // what RSMAP_FILTER is tested against, through the authority
                "realloc_max_grow = gpu=1", // a job may grow by one gpu instance through rsmap-shell (docs/realloc.md)
                String.join("\n", authority.hostLines()),
                "reconcile_interval = 5") + "\n");
    }

    @Override
    public String host() {
        return host;
    }

    /** The environment of the cell's commands: SGE_ROOT, SGE_CELL, the ports, PATH with the release's binaries. */
    Map<String, String> cellEnv() {
        Map<String, String> env = new LinkedHashMap<>(release.env());
        env.put("SGE_CELL", cell);
        env.put("SGE_QMASTER_PORT", Integer.toString(port));
        env.put("SGE_EXECD_PORT", Integer.toString(port + 1));
        env.put("RSMAP_SOCKET", socket().toString()); // execd hands its own environment on to the hooks
        env.put("FIRST_JOB_ID", Integer.toString(firstJobId));
        return env;
    }

    /** A command as root in the cell's environment. */
    Run run(String... command) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("env")); // the release's PATH finds the command, not this JVM's
        cmd.addAll(List.of(command));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(work.toFile());
        pb.environment().putAll(cellEnv());
        return finish(pb, cmd);
    }

    /** A command as the job user, in a clean environment (qsub -V would hand it to the job) plus {@code env}. */
    Run asUser(Map<String, String> env, String... command) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("runuser", "-u", USER, "--", "env", "-i", "HOME=" + work));
        cellEnv().forEach((k, v) -> cmd.add(k + "=" + v));
        env.forEach((k, v) -> cmd.add(k + "=" + v));
        cmd.addAll(List.of(command));
        return finish(new ProcessBuilder(cmd).directory(work.toFile()), cmd);
    }

    private static Run finish(ProcessBuilder pb, List<String> command) throws IOException, InterruptedException {
        Ran r = RealCluster.finish(pb, command, 150);
        return new Run(r.code(), r.out(), r.err());
    }

    @Override
    protected void mustRun(List<String> command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        pb.environment().putAll(cellEnv());
        Run r = finish(pb, command);
        if (r.code() != 0) {
            throw new IllegalStateException(command + " exited " + r.code() + ": " + r.out() + r.err());
        }
    }

    @Override
    protected Process spawn(String name, List<String> command) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).directory(dir.toFile())
                .redirectOutput(dir.resolve("log").resolve(name + ".out").toFile());
        return daemon(pb.start()); // munged, the authority, rsmapd (qmaster and execd: the cell script's)
    }

    /** rsmapd's log and the tail of qmaster's and execd's messages, for a failure message. */
    @Override
    public String logs() throws IOException {
        StringBuilder b = new StringBuilder();
        List<Path> files = new ArrayList<>(List.of(dir.resolve("log/rsmapd.out")));
        for (String m : new String[] {"cell/qmaster/messages", "cell/execd"}) {
            Path p = dir.resolve(m);
            if (Files.isDirectory(p)) {
                try (Stream<Path> s = Files.walk(p, 2)) {
                    s.filter(f -> f.getFileName().toString().equals("messages")).forEach(files::add);
                }
            } else {
                files.add(p);
            }
        }
        for (Path p : files) {
            if (Files.isRegularFile(p)) {
                List<String> lines = Files.readAllLines(p, StandardCharsets.ISO_8859_1);
                b.append("==> ").append(p).append(" <==\n");
                lines.subList(Math.max(0, lines.size() - 30), lines.size()).forEach(l -> b.append(l).append('\n'));
            }
        }
        return b.toString();
    }

    /** Deletes every job, stops execd and qmaster and rsmapd by pid, removes the cell, cgroups and files. */
    @Override
    protected void stop() {
        try {
            if (cellUp) {
                run("qdel", "-f", "-u", USER);
                Polls.await(Duration.ofSeconds(10), () -> run("qstat", "-u", USER).out().isBlank());
            }
            cell("stop");
        } catch (IOException | InterruptedException | RuntimeException e) {
            System.err.println("gridengine cluster: stopping the cell: " + e);
        }
        stopDaemons(false);
        for (int id = firstJobId; id < firstJobId + 200; id++) {
            removeCgroup(Path.of("/sys/fs/cgroup/devices/rsmap", Integer.toString(id)), "gridengine cluster");
        }
        rsmap.daemon.Trees.deleteOrSay(dir, "gridengine cluster");
    }

    private static int freePort() throws IOException {
        for (int tries = 0; tries < 20; tries++) {
            int p;
            try (ServerSocket s = new ServerSocket(0)) {
                p = s.getLocalPort();
            }
            try (ServerSocket next = new ServerSocket(p + 1)) {
                return p; // qmaster on p, execd on p + 1
            } catch (IOException taken) {
                // try another pair
            }
        }
        throw new IOException("no two free neighbouring ports");
    }
}
