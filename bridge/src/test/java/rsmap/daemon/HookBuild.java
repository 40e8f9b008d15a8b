// Test support: rsmap-hook and rsmap-shell built by src/main/c/build.sh for one test class, with their installed
// configuration (RSMAP_SYSCONF) in a directory of the test's, and fake-rsmapd, a stand-in daemon that any user can run (a
// job owner's own); registered as the class's extension, it builds before the class's own @BeforeAll and is
// removed after its @AfterAll.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Everything lives under /tmp with mode 0755, reachable by the job user (a JUnit temporary directory is 0700
 * and a clone may live under /root). The hooks' configuration path is compiled in, never taken from the
 * environment, so the test compiles its own: {@link #sysconf} is {@code <dir>/etc/rsmapd.conf}, absent until
 * a test writes it (then the hooks see an installed rsmapd). Registered as a static field
 * ({@code @RegisterExtension}); its paths are there from the class's first {@code @BeforeAll} on.
 */
final class HookBuild implements BeforeAllCallback, AfterAllCallback {
    /**
     * What running hooks as the job's owner needs: root (to switch users, as execd does), setpriv and gcc.
     * Missing under CI=true fails the test; elsewhere it is skipped with the reason.
     */
    static void requireRootSetprivGcc(String rootFor) throws Exception {
        String why = null;
        if (!ExecdCell.sh("id -u").strip().equals("0")) {
            why = rootFor + " needs root";
        } else if (ExecdCell.sh("command -v setpriv; command -v gcc").lines().count() < 2) {
            why = "setpriv and gcc are needed";
        }
        if (why != null) {
            if ("true".equals(System.getenv("CI"))) {
                org.junit.jupiter.api.Assertions.fail(why);
            }
            org.junit.jupiter.api.Assumptions.abort(why);
        }
    }

    static final Path C = Path.of("src", "main", "c").toAbsolutePath();
    /** What the class's tests run hooks as the job user for: said where root, setpriv or gcc is missing. */
    private final String rootFor;
    // Set in beforeAll, for the class's life.
    private Path dir;
    private Path fake;
    private Path sysconf;
    private String user;
    private final List<Process> started = new ArrayList<>();

    record Run(int code, String out, String err) {
    }

    HookBuild(String rootFor) {
        this.rootFor = rootFor;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        requireRootSetprivGcc(rootFor);
        user = ExecdCell.jobUser();
        dir = Files.createTempDirectory("rsmap-hooks", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        sysconf = Files.createDirectories(dir.resolve("etc")).resolve("rsmapd.conf");
        // The shipped build's own step and flags, with this test's configuration path compiled in.
        build("sh", C.resolve("build.sh").toString(), dir.toString(), "hook", sysconf.toString());
        fake = dir.resolve("fake-rsmapd");
        build("gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-std=c11", "-D_GNU_SOURCE", "-I" + C, "-o", fake.toString(),
                Path.of("src", "test", "c", "fake-rsmapd.c").toAbsolutePath().toString(),
                dir.resolve("native").resolve("librsmap-client.a").toString());
        // A directory any user may create sockets and logs in: the job user's fake daemon lives here.
        Files.createDirectories(dir.resolve("run"));
        ExecdCell.sh("chmod 1777 " + dir.resolve("run"));
    }

    /** The build's folder (mode 0755): the hooks, etc/, run/ (any user's sockets and logs). */
    Path dir() {
        return dir;
    }

    Path hook() {
        return dir.resolve("rsmap-hook");
    }

    /** The rsmap-starter link to the hook. */
    Path starter() {
        return dir.resolve("rsmap-starter");
    }

    Path shell() {
        return dir.resolve("rsmap-shell");
    }

    /** The hooks' installed configuration, absent until {@link #install}. */
    Path sysconf() {
        return sysconf;
    }

    /** The user the class's jobs run as ({@link ExecdCell#jobUser()}). */
    String user() {
        return user;
    }

    private static void build(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(cmd[0] + ": " + out).isZero();
    }

    /** {@code cmd} run as {@code user} (null: as this process's user) with the real and saved ids switched. */
    static List<String> as(String user, List<String> cmd) throws Exception {
        if (user == null) {
            return cmd;
        }
        List<String> all = new ArrayList<>(List.of("setpriv", "--reuid=" + user,
                "--regid=" + ExecdCell.sh("id -g " + user).strip(), "--clear-groups"));
        all.addAll(cmd);
        return all;
    }

    static long uid(String user) throws Exception {
        return Long.parseLong(ExecdCell.sh("id -u " + user).strip());
    }

    /** fake-rsmapd on {@code dir/run/<name>.sock} as {@code user}, its commands in {@code dir/run/<name>.log}. */
    Path fake(String user, String name, String... script) throws Exception {
        Path socket = dir.resolve("run").resolve(name + ".sock");
        List<String> cmd = new ArrayList<>(List.of(fake.toString(), socket.toString(),
                dir.resolve("run").resolve(name + ".log").toString()));
        cmd.addAll(List.of(script));
        Process p = new ProcessBuilder(as(user, cmd)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        started.add(p);
        String ready = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertThat(ready).as("fake-rsmapd listens").isEqualTo("ready");
        return socket;
    }

    /** The commands a fake daemon received, "<code> <argument>" each. */
    List<String> log(String name) throws IOException {
        Path log = dir.resolve("run").resolve(name + ".log");
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    /** {@code cmd} as {@code user} with exactly {@code env} (and PATH). */
    static Run run(String user, List<String> cmd, Map<String, String> env) throws Exception {
        return run(user, cmd, env, 60);
    }

    /** The same ending within {@code seconds}. */
    static Run run(String user, List<String> cmd, Map<String, String> env, int seconds) throws Exception {
        Map<String, String> all = new HashMap<>(Map.of("PATH", "/usr/local/bin:/usr/bin:/bin"));
        all.putAll(env);
        return exactly(user, cmd, all, seconds);
    }

    /**
     * {@code cmd} as {@code user} with exactly {@code env} (no PATH unless it names one), ending within
     * {@code seconds}: a hook's, rsmap-shell's or a stand-in's run, its exit code and output.
     */
    static Run exactly(String user, List<String> cmd, Map<String, String> env, int seconds) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(as(user, cmd));
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        assertThat(p.waitFor(seconds, TimeUnit.SECONDS)).isTrue();
        return new Run(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    /** Writes the installed configuration as root's, mode 0644, as the packages install it. */
    void install(String text) throws IOException {
        Files.deleteIfExists(sysconf);
        Files.writeString(sysconf, text);
        Files.setPosixFilePermissions(sysconf, PosixFilePermissions.fromString("rw-r--r--"));
    }

    void uninstall() throws Exception {
        Trees.delete(sysconf);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        for (Process p : started) {
            p.destroyForcibly().waitFor();
        }
        if (dir != null) {
            Trees.delete(dir);
        }
    }
}
