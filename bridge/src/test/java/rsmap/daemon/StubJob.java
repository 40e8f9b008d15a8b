// Test support: one run of native-stubs' execd-stub, a job or a pe task as sge_execd starts it - its spool
// tree, host, tmpdir and owner, the hooks it runs (prolog and epilog as root@, the starter_method), the options
// and environment execd would give - built by a cell (ExecdCell) and varied by the test that needs more.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

final class StubJob {
    /** Built by the native-stubs module. */
    static final Path STUB = Path.of("..", "native-stubs", "target", "execd-stub").toAbsolutePath().normalize();

    private final String id;
    private Path spool;
    private String host = "node01";
    private Path tmpdir;
    private String user;
    private Path hook;
    private Path starter;
    private final List<String> options = new ArrayList<>();
    /** What the job's environment gets beside this JVM's; a null value removes the name. */
    private final Map<String, String> env = new LinkedHashMap<>();

    /** Job {@code id} spooled under {@code spool} (one tree per host below it) with tmpdir {@code tmpdir}, cwd /. */
    StubJob(Path spool, String id, Path tmpdir) {
        this.spool = spool;
        this.id = id;
        this.tmpdir = tmpdir;
    }

    /** Prolog and epilog {@code root@hook prolog|epilog}, the starter_method {@code starter} (docs/integration-ocs.md). */
    StubJob hooks(Path hook, Path starter) {
        this.hook = hook;
        this.starter = starter;
        return this;
    }

    /** A task of a parallel job on a host where no prolog ran (qrsh -inherit): the starter only. */
    StubJob noPrologOrEpilog() {
        hook = null;
        return this;
    }

    /** None of the hooks: what execd-stub alone does. */
    StubJob noHooks() {
        hook = null;
        starter = null;
        return this;
    }

    /** On {@code host} (node01 unless said). */
    StubJob host(String host) {
        this.host = host;
        return this;
    }

    /** Spooled under {@code spool} instead. */
    StubJob spool(Path spool) {
        this.spool = spool;
        return this;
    }

    /** As {@code user} (execd's shepherd switches to the owner as root); null: as this process's user. */
    StubJob user(String user) {
        this.user = user;
        return this;
    }

    /** More of execd-stub's options, after the ones above: one given again there takes the last value. */
    StubJob options(String... more) {
        return options(List.of(more));
    }

    StubJob options(List<String> more) {
        options.addAll(more);
        return this;
    }

    /** The daemon the hooks reach. */
    StubJob socket(Path socket) {
        return env("RSMAP_SOCKET", socket.toString());
    }

    /** The job's RSMAP_REQUEST; null: none. */
    StubJob request(String request) {
        return env("RSMAP_REQUEST", request);
    }

    /** {@code name} in the job's environment; a null {@code value} removes it (whatever this JVM has). */
    StubJob env(String name, String value) {
        env.put(name, value);
        return this;
    }

    /** More of the job's environment, "NAME=value" each. */
    StubJob environment(String... assignments) {
        for (String kv : assignments) {
            env(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        return this;
    }

    /** Starts execd-stub with {@code command} as the job's (after "--"), its stderr in its stdout. */
    Process start(String... command) throws IOException {
        assertThat(STUB).as("built by the native-stubs module").isExecutable();
        List<String> cmd = new ArrayList<>(List.of(STUB.toString(), "--spool", spool.toString(), "--host", host,
                "--job", id, "--cwd", "/", "--tmpdir", tmpdir.toString()));
        if (user != null) {
            cmd.addAll(List.of("--user", user));
        }
        if (hook != null) {
            cmd.addAll(List.of("--prolog", "root@" + hook + " prolog"));
        }
        if (starter != null) {
            cmd.addAll(List.of("--starter", starter.toString()));
        }
        if (hook != null) {
            cmd.addAll(List.of("--epilog", "root@" + hook + " epilog"));
        }
        cmd.addAll(options);
        cmd.add("--");
        cmd.addAll(List.of(command));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        env.forEach((k, v) -> {
            if (v == null) {
                pb.environment().remove(k);
            } else {
                pb.environment().put(k, v);
            }
        });
        return pb.start();
    }

    /** The job {@code sh -c script}. */
    Process sh(String script) throws IOException {
        return start("sh", "-c", script);
    }
}
