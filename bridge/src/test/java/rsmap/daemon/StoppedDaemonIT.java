// A stopped rsmapd (SIGSTOP: it accepts into its backlog and never answers, as one stuck in a dead disk's fsync)
// costs each client at most its documented timeout, then one clear line and its documented exit; a daemon whose
// listen backlog is full costs no more. The real bin/rsmapd process, the real hooks, rsmap-shell and bin/rsmap.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import rsmap.daemon.config.Config;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(300)
class StoppedDaemonIT {
    /** RSMAP_TIMEOUT for every client: a shorter bound than the documented 30 s, read the same way. */
    static final int TIMEOUT = 3;
    /** What a client may take beyond its timeout: process start (a JVM for bin/rsmap), the last poll. */
    static final long SLACK_MS = 4000;

    @RegisterExtension
    static final HookBuild build = new HookBuild("running the starter as the job user");
    Process daemon;
    Path socket;

    @BeforeAll
    void start() throws Exception {
        Config config = TestDaemon.config(build.dir().resolve("d"), "gpu=2(0 1)", "socket_mode = 0666",
                "reconcile_interval = 0");
        socket = config.socket();
        daemon = RsmapdProcess.start(config.complexes().resolveSibling("rsmapd.conf"), socket,
                build.dir().resolve("rsmapd.log"));
    }

    @AfterAll
    void stop() throws Exception {
        if (daemon != null) {
            signal("CONT");
            daemon.destroyForcibly().waitFor();
        }
    }

    private void signal(String name) throws Exception {
        ExecdCell.sh("kill -" + name + " " + daemon.pid());
    }

    private Map<String, String> env(String sock) {
        Map<String, String> env = new HashMap<>(Map.of("JOB_ID", "7", "SGE_TASK_ID", "undefined", "RSMAP_SOCKET", sock,
                "RSMAP_REQUEST", "gpu=1", "USER", build.user(), "RSMAP_TIMEOUT", Integer.toString(TIMEOUT)));
        // bin/rsmap runs `java` from PATH: this JVM's
        env.put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":/usr/local/bin:/usr/bin:/bin");
        return env;
    }

    /** One client: its exit and stderr, and that it took its timeout (it waited) but not much more. */
    private void costsItsTimeout(String what, String who, List<String> cmd, Map<String, String> env, int exit,
                                 String line) throws Exception {
        long t0 = System.nanoTime();
        HookBuild.Run r = HookBuild.run(who, cmd, env);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertThat(r.code()).as("%s: %s", what, r.err()).isEqualTo(exit);
        assertThat(r.err()).as(what).contains(line).hasLineCount(1);
        assertThat(ms).as("%s took %d ms", what, ms).isBetween(TIMEOUT * 1000L - 200, TIMEOUT * 1000L + SLACK_MS);
    }

    @Test
    void stoppedDaemon_costsEachClientItsTimeout_thenOneLineAndItsDocumentedExit() throws Exception {
        Map<String, String> env = env(socket.toString());
        String silent = "rsmapd did not answer INIT within " + TIMEOUT + " s";
        Path rsmap = Path.of("..", "bin", "rsmap").toAbsolutePath().normalize();
        signal("STOP");
        try {
            costsItsTimeout("rsmap-hook prolog", null, List.of(build.hook().toString(), "prolog"), env, 99,
                    "rsmap-hook: " + silent);
            costsItsTimeout("rsmap-hook epilog", null, List.of(build.hook().toString(), "epilog"), env, 1,
                    "rsmap-hook: " + silent);
            costsItsTimeout("rsmap-starter", build.user(), List.of(build.starter().toString(), "true"), env, 99,
                    "rsmap-hook: " + silent);
            costsItsTimeout("rsmap-shell status", null, List.of(build.shell().toString(), "status"), env, 1,
                    "rsmap-shell: status: " + silent);
            costsItsTimeout("rsmap status", null, List.of(rsmap.toString(), "status", "--socket", socket.toString()),
                    env, 1, "error: rsmapd at " + socket + ": rsmapd did not answer within " + TIMEOUT + " s");
        } finally {
            signal("CONT");
        }
        // Resumed, it serves again: the next job starts and ends.
        assertThat(HookBuild.run(null, List.of(build.hook().toString(), "prolog"), env).code()).isZero();
        assertThat(HookBuild.run(null, List.of(build.hook().toString(), "epilog"), env).code()).isZero();
    }

    @Test
    void fullBacklog_aConnectThatIsNeverAccepted_costsNoMoreThanTheTimeout() throws Exception {
        Path deaf = build.fake(null, "deaf", "deaf");
        // A backlog of 0 holds one connection: this one. The next connect finds it full (EAGAIN) and must not block.
        try (SocketChannel first = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            first.connect(UnixDomainSocketAddress.of(deaf));
            Map<String, String> env = env(deaf.toString());
            String line = "cannot reach rsmapd at " + deaf + ": it did not accept the connection in time";
            costsItsTimeout("rsmap-hook prolog", null, List.of(build.hook().toString(), "prolog"), env, 99,
                    "rsmap-hook: " + line);
            costsItsTimeout("rsmap-shell status", null, List.of(build.shell().toString(), "status"), env, 1,
                    "rsmap-shell: " + line);
            Path rsmap = Path.of("..", "bin", "rsmap").toAbsolutePath().normalize();
            costsItsTimeout("rsmap status", null, List.of(rsmap.toString(), "status", "--socket", deaf.toString()), env,
                    1, "error: " + line);
        }
    }
}
