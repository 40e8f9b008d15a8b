// Test support: one execution host with the hooks - a fresh folder with the real hook, its rsmap-starter link
// (and rsmap-shell, fake device nodes, the stand-in NVML's folder of card nodes), where jobs start through
// execd-stub as execd starts them (docs/integration-ocs.md), as their owner on cgroup v1 where the test asks
// for devices; closing removes the folder.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import rsmap.daemon.config.Config;
import rsmap.wire.Polls;

/**
 * @param user the user the jobs run as; null: this process's (root here), no --user
 * @param dir the hook, its starter link and, with {@link #withShell()}, rsmap-shell
 * @param tmpdir the jobs' tmpdir, writable by their owner: where markers go
 * @param shell whether rsmap-shell is in {@code dir}, and {@code dir} on the jobs' PATH
 */
public record ExecdCell(String user, Path dir, Path tmpdir, boolean shell) implements AutoCloseable {
    /** rsmap-hook, built by build.sh; each cell has a copy of its own. */
    static final Path HOOK = Path.of("target", "rsmap-hook").toAbsolutePath();
    /** rsmap-shell, built by build.sh. */
    static final Path SHELL = Path.of("target", "rsmap-shell").toAbsolutePath();
    /** What opening a fake device node says where the policy lets the job: the node has no driver. */
    static final String ENXIO = "No such device or address";
    /** What opening a device node says where the policy does not let the job. */
    static final String EPERM = "Operation not permitted";

    /**
     * The job's owner, once root (execd's shepherd switches users as root) and a cgroup v1 devices controller
     * are there; without either a test skips saying so, under CI=true it fails.
     */
    static String require() throws Exception {
        String user = jobUser();
        if (!Files.isRegularFile(Path.of("/sys/fs/cgroup/devices/devices.allow"))) {
            if ("true".equals(System.getenv("CI"))) {
                fail("no cgroup v1 devices controller at /sys/fs/cgroup/devices");
            }
            Assumptions.abort("no cgroup v1 devices controller at /sys/fs/cgroup/devices");
        }
        return user;
    }

    /**
     * The user a job runs as: nobody, or one created here. Needs root (execd's shepherd switches users as
     * root); outside CI a non-root run skips with that reason, under CI=true it fails.
     */
    public static String jobUser() throws Exception {
        if (!sh("id -u").strip().equals("0")) {
            String why = "switching to the job's owner needs root, as sge_execd does";
            if ("true".equals(System.getenv("CI"))) {
                fail(why);
            }
            Assumptions.abort(why);
        }
        if (sh("id -u nobody 2>/dev/null").isBlank()) {
            sh("id -u rsmap-job >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/sh rsmap-job");
            return "rsmap-job";
        }
        return "nobody";
    }

    /** {@code sh -c command}'s output, stderr too; it must end within 30 s. */
    static String sh(String command) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", command).redirectErrorStream(true).start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }

    /**
     * A cell in a new folder of mode 0755 (under /tmp, reachable by a job's owner: a JUnit temporary directory
     * is 0700, and a clone may live under /root), the jobs' tmpdir too; they run as this process's user. No
     * root, no devices controller needed.
     */
    static ExecdCell open(String prefix) throws Exception {
        Path dir = Files.createTempDirectory(prefix, PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        return new ExecdCell(null, dir, dir, false).hooks();
    }

    /** A cell in a new folder of mode 1777 (sticky, as /tmp: a state directory below it is trusted), the tmpdir too. */
    static ExecdCell sticky(String prefix) throws Exception {
        return sticky(prefix, require());
    }

    private static ExecdCell sticky(String prefix, String user) throws Exception {
        Path dir = Files.createTempDirectory(prefix, PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxrwxrwx")));
        sh("chmod 1777 " + dir);
        return new ExecdCell(user, dir, dir, false).hooks();
    }

    /** A cell in a new folder of mode 0755; the jobs' tmpdir is a sticky folder m (mode 1777) in it. */
    static ExecdCell closed(String prefix) throws Exception {
        String user = require();
        Path dir = Files.createTempDirectory(prefix);
        sh("chmod 0755 " + dir + "; mkdir -m 1777 " + dir.resolve("m"));
        return new ExecdCell(user, dir, dir.resolve("m"), false).hooks();
    }

    /**
     * A sticky cell that is a stand-in GPU host too ({@link #gpu()}: the stand-in NVML, a folder dev for its
     * cards' nodes): {@link #gpuConfig} names it as gpu_dev_dir.
     */
    public static ExecdCell nvml(String prefix) throws Exception {
        String user = require();
        ExecdCell cell = sticky(prefix, user);
        try {
            NvmlHost.in(cell.dir());
            return cell;
        } catch (Throwable e) {
            cell.close();
            throw e;
        }
    }

    /** The cell as a stand-in GPU host: its description, dev/ and MIG files in the cell's folder. */
    public NvmlHost gpu() {
        return new NvmlHost(dir);
    }

    private ExecdCell hooks() throws Exception {
        try {
            assertThat(StubJob.STUB).as("built by the native-stubs module").isExecutable();
            Path hook = Files.copy(HOOK, dir.resolve("rsmap-hook"));
            Files.createSymbolicLink(dir.resolve("rsmap-starter"), Path.of("rsmap-hook"));
            assertThat(hook).isExecutable();
            return this;
        } catch (Throwable e) {
            close();
            throw e;
        }
    }

    /** This cell with its jobs run as {@code user} instead. */
    ExecdCell as(String user) {
        return new ExecdCell(user, dir, tmpdir, shell);
    }

    /** This cell with rsmap-shell copied in: the jobs find it on their PATH. */
    ExecdCell withShell() throws Exception {
        try {
            assertThat(SHELL).as("built by build.sh").isExecutable();
            Files.copy(SHELL, dir.resolve("rsmap-shell"));
            return new ExecdCell(user, dir, tmpdir, true);
        } catch (Throwable e) {
            close();
            throw e;
        }
    }

    /** A character device node {@code name} in the cell (mode 666), {@code major:minor}. */
    Path node(String name, int major, int minor) throws Exception {
        Path node = dir.resolve(name);
        Files.createDirectories(node.getParent());
        sh("mknod -m 666 " + node + " c " + major + " " + minor);
        return node;
    }

    /** The nodes of cards 0 to n - 1 as NVIDIA's driver makes them: dev/nvidiaI, c 195:I. */
    public void gpus(int n) throws Exception {
        Files.createDirectories(dir.resolve("dev"));
        gpu().cardNodes(n);
    }

    /**
     * A daemon in folder d with no complex values of its own: the map gpu from the stand-in NVML, its cards'
     * nodes in dev, devices through cgroup v1, a socket any job's owner reaches; {@code more} settings.
     */
    public Config gpuConfig(String... more) throws Exception {
        return gpu().config(dir.resolve("d"), "NONE", jobSettings(more));
    }

    /** {@link #gpuConfig} with the map mig of slices made on demand, declared in its complex table. */
    Config migConfig(String... more) throws Exception {
        return gpu().migConfig(dir.resolve("d"), "NONE", jobSettings(more));
    }

    /** Devices through cgroup v1, a socket any job's owner reaches, no reconciliation of its own; then {@code more}. */
    private static String[] jobSettings(String... more) {
        List<String> settings = new ArrayList<>(List.of("device_backend = cgroup-v1", "socket_mode = 0666",
                "reconcile_interval = 0"));
        settings.addAll(List.of(more));
        return settings.toArray(new String[0]);
    }

    /**
     * Job {@code id} through execd-stub on node01 with the cell's hooks, as {@link #user}, spooled in the cell's
     * spool folder, rsmap-shell on its PATH where the cell has it; the test adds its daemon and the rest.
     */
    StubJob stub(String id) {
        StubJob job = new StubJob(dir.resolve("spool"), id, tmpdir).hooks(dir.resolve("rsmap-hook"),
                dir.resolve("rsmap-starter")).user(user);
        return shell ? job.env("PATH", dir + ":" + System.getenv("PATH")) : job;
    }

    /**
     * A job through execd-stub and the hooks as {@link #user}, asking for {@code request}; the job is
     * {@code sh -c script}, {@code env} ("NAME=value") more of its environment.
     */
    public Process job(Config config, String id, String request, String script, String... env) throws Exception {
        return stub(id).socket(config.socket()).request(request).environment(env).sh(script);
    }

    /** What a job printed, then "exit=" and its exit code; it must end within 90 s. */
    public static String finish(Process p) throws Exception {
        return finish(p, 90);
    }

    /** The same, the job ending within {@code seconds}. */
    public static String finish(Process p, int seconds) throws Exception {
        assertThat(p.waitFor(seconds, TimeUnit.SECONDS)).as("the job ends").isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8) + "exit=" + p.exitValue();
    }

    /** In a job's script: what opening {@code node} says, its error without the path ({@link #ENXIO}, {@link #EPERM}). */
    static String open(Path node) {
        return "$(cat " + node + " 2>&1 | sed 's/.*: //')";
    }

    /** A marker file a job or the test creates, in the jobs' tmpdir. */
    public Path marker(String name) {
        return tmpdir.resolve(name);
    }

    /** In a job's script: wait for marker {@code name} (bounded, {@link #waitFor(Path)}), then go on. */
    public String waitFor(String name) {
        return waitFor(marker(name)) + "; ";
    }

    /**
     * In a job's script: wait for {@code file}, bounded to 10 minutes (longer than any test waits): a test run
     * killed midway, which never creates the file, leaves no job looping behind it.
     */
    public static String waitFor(Path file) {
        return "i=0; while [ ! -e " + file + " ] && [ $i -lt 12000 ]; do sleep 0.05; i=$((i+1)); done";
    }

    /** Asserts {@code done} within 60 s: a job's step through the hooks under cgroup v1, on a loaded machine. */
    static <E extends Exception> void until(String what, Polls.Check<E> done) throws E, InterruptedException {
        Polls.until(what, Duration.ofSeconds(60), done);
    }

    /** The cell's rsmap-shell as {@code who} (null: root) for job {@code id}. */
    HookBuild.Run rsmapShell(String who, Config config, String id, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(dir.resolve("rsmap-shell").toString()));
        cmd.addAll(List.of(args));
        return HookBuild.run(who, cmd, new HashMap<>(Map.of("JOB_ID", id, "SGE_TASK_ID", "undefined",
                "RSMAP_SOCKET", config.socket().toString())));
    }

    @Override
    public void close() throws Exception {
        Trees.delete(dir);
    }
}
