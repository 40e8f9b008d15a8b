// Test support: rsmap-hook and rsmap-shell built by src/main/c/build.sh for one test class, with their installed
// configuration (RSMAP_SYSCONF) in a directory of the test's, and fake-rsmapd, a stand-in daemon that any user can run (a
// job owner's own).
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
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Everything lives under /tmp with mode 0755, reachable by the job user (a JUnit temporary directory is 0700
 * and a clone may live under /root). The hooks' configuration path is compiled in, never taken from the
 * environment, so the test compiles its own: {@link #sysconf} is {@code <dir>/etc/rsmapd.conf}, absent until
 * a test writes it (then the hooks see an installed rsmapd).
 */
final class HookBuild implements AutoCloseable {
    /**
     * What running hooks as the job's owner needs: root (to switch users, as execd does), setpriv and gcc.
     * Missing under CI=true fails the test; elsewhere it is skipped with the reason.
     */
    static void requireRootSetprivGcc(String rootFor) throws Exception {
        String why = null;
        if (!ExecdStubIT.sh("id -u").strip().equals("0")) {
            why = rootFor + " needs root";
        } else if (ExecdStubIT.sh("command -v setpriv; command -v gcc").lines().count() < 2) {
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
    final Path dir;
    final Path hook;
    final Path starter;
    final Path shell;
    final Path fake;
    final Path sysconf;
    private final List<Process> started = new ArrayList<>();

    record Run(int code, String out, String err) {
    }

    HookBuild() throws Exception {
        dir = Files.createTempDirectory("rsmap-hooks", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        sysconf = Files.createDirectories(dir.resolve("etc")).resolve("rsmapd.conf");
        // The shipped build's own step and flags, with this test's configuration path compiled in.
        build("sh", C.resolve("build.sh").toString(), dir.toString(), "hook", sysconf.toString());
        hook = dir.resolve("rsmap-hook");
        starter = dir.resolve("rsmap-starter");
        shell = dir.resolve("rsmap-shell");
        fake = dir.resolve("fake-rsmapd");
        build("gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-std=c11", "-D_GNU_SOURCE", "-I" + C, "-o", fake.toString(),
                Path.of("src", "test", "c", "fake-rsmapd.c").toAbsolutePath().toString(),
                dir.resolve("native").resolve("librsmap-client.a").toString());
        // A directory any user may create sockets and logs in: the job user's fake daemon lives here.
        Files.createDirectories(dir.resolve("run"));
        ExecdStubIT.sh("chmod 1777 " + dir.resolve("run"));
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
                "--regid=" + ExecdStubIT.sh("id -g " + user).strip(), "--clear-groups"));
        all.addAll(cmd);
        return all;
    }

    static long uid(String user) throws Exception {
        return Long.parseLong(ExecdStubIT.sh("id -u " + user).strip());
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
        ProcessBuilder pb = new ProcessBuilder(as(user, cmd));
        pb.environment().clear();
        pb.environment().put("PATH", "/usr/local/bin:/usr/bin:/bin");
        pb.environment().putAll(env);
        Process p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
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
        ExecdStubIT.sh("rm -rf " + sysconf);
    }

    @Override
    public void close() throws Exception {
        for (Process p : started) {
            p.destroyForcibly().waitFor();
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
