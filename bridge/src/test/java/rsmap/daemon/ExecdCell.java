// Test support: one execution host for the device ITs - a fresh folder with the real hook, its rsmap-starter
// link, fake device nodes (and rsmap-shell, or the stand-in NVML's folder of card nodes), where jobs start
// through execd-stub as their owner on cgroup v1 (docs/integration-ocs.md); closing removes the folder.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * @param user the user the jobs run as
 * @param dir the hook, its starter link and, with {@link #withShell()}, rsmap-shell
 * @param tmpdir the jobs' tmpdir, writable by their owner: where markers go
 * @param shell whether rsmap-shell is in {@code dir}, and {@code dir} on the jobs' PATH
 */
record ExecdCell(String user, Path dir, Path tmpdir, boolean shell) implements AutoCloseable {
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
        String user = ExecdStubIT.jobUser();
        if (!Files.isRegularFile(Path.of("/sys/fs/cgroup/devices/devices.allow"))) {
            if ("true".equals(System.getenv("CI"))) {
                fail("no cgroup v1 devices controller at /sys/fs/cgroup/devices");
            }
            Assumptions.abort("no cgroup v1 devices controller at /sys/fs/cgroup/devices");
        }
        return user;
    }

    /** A cell in a new folder of mode 1777 (sticky, as /tmp: a state directory below it is trusted), the tmpdir too. */
    static ExecdCell sticky(String prefix) throws Exception {
        return sticky(prefix, require());
    }

    private static ExecdCell sticky(String prefix, String user) throws Exception {
        Path dir = Files.createTempDirectory(prefix, PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxrwxrwx")));
        ExecdStubIT.sh("chmod 1777 " + dir);
        return new ExecdCell(user, dir, dir, false).hooks();
    }

    /** A cell in a new folder of mode 0755; the jobs' tmpdir is a sticky folder m (mode 1777) in it. */
    static ExecdCell closed(String prefix) throws Exception {
        String user = require();
        Path dir = Files.createTempDirectory(prefix);
        ExecdStubIT.sh("chmod 0755 " + dir + "; mkdir -m 1777 " + dir.resolve("m"));
        return new ExecdCell(user, dir, dir.resolve("m"), false).hooks();
    }

    /**
     * A sticky cell for the stand-in NVML (built by the native-stubs module), with a folder dev for its cards'
     * nodes: {@link #gpuConfig} names it as gpu_dev_dir.
     */
    static ExecdCell nvml(String prefix) throws Exception {
        String user = require();
        assertThat(GpuStub.LIBRARY).as("built by the native-stubs module").isRegularFile();
        ExecdCell cell = sticky(prefix, user);
        Files.createDirectories(cell.dir().resolve("dev"));
        return cell;
    }

    private ExecdCell hooks() throws Exception {
        try {
            Path hook = Files.copy(ExecdStubIT.HOOK, dir.resolve("rsmap-hook"));
            Files.createSymbolicLink(dir.resolve("rsmap-starter"), Path.of("rsmap-hook"));
            assertThat(hook).isExecutable();
            return this;
        } catch (Throwable e) {
            close();
            throw e;
        }
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
        ExecdStubIT.sh("mknod -m 666 " + node + " c " + major + " " + minor);
        return node;
    }

    /** The nodes of cards 0 to n - 1 as NVIDIA's driver makes them: dev/nvidiaI, c 195:I. */
    void gpus(int n) throws Exception {
        for (int i = 0; i < n; i++) {
            node("dev/nvidia" + i, 195, i);
        }
    }

    /**
     * A daemon in folder d with no complex values of its own: the map gpu from the stand-in NVML, its cards'
     * nodes in dev, devices through cgroup v1, a socket any job's owner reaches; {@code more} settings.
     */
    Config gpuConfig(String... more) throws Exception {
        List<String> settings = new ArrayList<>(List.of("device_backend = cgroup-v1", "socket_mode = 0666",
                "reconcile_interval = 0", "nvml_library = " + GpuStub.LIBRARY, "gpu_map = gpu",
                "gpu_dev_dir = " + dir.resolve("dev")));
        settings.addAll(List.of(more));
        return TestDaemon.config(dir.resolve("d"), "NONE", settings.toArray(new String[0]));
    }

    /**
     * A job through execd-stub and the hooks as {@link #user}, asking for {@code request}; the job is
     * {@code sh -c script}, {@code env} ("NAME=value") more of its environment.
     */
    Process job(Config config, String id, String request, String script, String... env) throws Exception {
        Path hook = dir.resolve("rsmap-hook");
        List<String> cmd = new ArrayList<>(List.of(ExecdStubIT.STUB.toString(), "--spool", dir.resolve("spool").toString(),
                "--host", "node01", "--job", id, "--cwd", "/", "--tmpdir", tmpdir.toString(), "--user", user,
                "--prolog", "root@" + hook + " prolog", "--starter", dir.resolve("rsmap-starter").toString(),
                "--epilog", "root@" + hook + " epilog", "--", "sh", "-c", script));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("RSMAP_SOCKET", config.socket().toString());
        pb.environment().put("RSMAP_REQUEST", request);
        for (String kv : env) {
            pb.environment().put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        if (shell) {
            pb.environment().put("PATH", dir + ":" + System.getenv("PATH"));
        }
        return pb.start();
    }

    /** What a job printed, then "exit=" and its exit code; it must end within 90 s. */
    static String finish(Process p) throws Exception {
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("the job ends").isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8) + "exit=" + p.exitValue();
    }

    /** In a job's script: what opening {@code node} says, its error without the path ({@link #ENXIO}, {@link #EPERM}). */
    static String open(Path node) {
        return "$(cat " + node + " 2>&1 | sed 's/.*: //')";
    }

    /** A marker file a job or the test creates, in the jobs' tmpdir. */
    Path marker(String name) {
        return tmpdir.resolve(name);
    }

    /** In a job's script: wait for marker {@code name} (bounded, {@link ExecdStubIT#waitFor}), then go on. */
    String waitFor(String name) {
        return ExecdStubIT.waitFor(marker(name)) + "; ";
    }

    /** Waits up to 60 s for {@code done}, then asserts it. */
    static void until(String what, BooleanSupplier done) throws Exception {
        for (int i = 0; i < 1200 && !done.getAsBoolean(); i++) {
            Thread.sleep(50);
        }
        assertThat(done.getAsBoolean()).as(what).isTrue();
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
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
