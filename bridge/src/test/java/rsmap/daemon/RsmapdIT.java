// bin/rsmapd as a service manager runs it: READY=1 on NOTIFY_SOCKET once the socket answers, STOPPING=1,
// the socket gone and exit 0 after SIGTERM.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

class RsmapdIT {
    static final Path RSMAPD = Path.of("..", "bin", "rsmapd").toAbsolutePath().normalize();
    /** Guards against a hang; start-up time is measured by rsmap.bench.StartupToReady, not here. */
    static final Duration GUARD = Duration.ofSeconds(60);

    @TempDir
    Path tmp;

    @Test
    void rsmapd_underNotifySocket_readyOnceServing_stoppingOnSigterm() throws Exception {
        Config config = TestDaemon.config(tmp, "gpu=2(0 1)");
        try (NotifyListener notify = NotifyListener.bind(tmp.resolve("notify").toString())) {
            ProcessBuilder pb = new ProcessBuilder(RSMAPD.toString(), "--config", tmp.resolve("rsmapd.conf").toString())
                    .redirectOutput(tmp.resolve("out").toFile()).redirectError(tmp.resolve("err").toFile());
            pb.environment().put("NOTIFY_SOCKET", notify.address());
            Process p = pb.start();
            try {
                assertThat(notify.receive(GUARD)).as("stderr: %s", Files.readString(tmp.resolve("err")))
                        .contains("READY=1");
                try (TestClient c = new TestClient(config.socket())) {
                    assertThat(c.call(Frame.of(1, Code.INIT.value(), Session.VERSION))).containsExactly(Session.ok(1));
                    assertThat(c.call(Frame.of(2, Code.QUERY.value(), "{}")).get(0).code()).isEqualTo(Code.STATE.value());
                }
                p.destroy(); // SIGTERM
                assertThat(notify.receive(GUARD)).contains("STOPPING=1");
                assertThat(p.waitFor(GUARD.toSeconds(), TimeUnit.SECONDS)).isTrue();
                // rsmapd(8), EXIT STATUS: 0, stopped by SIGTERM (not the JVM's 128 + 15).
                assertThat(p.exitValue()).as("stderr: %s", Files.readString(tmp.resolve("err"))).isZero();
                assertThat(config.socket()).doesNotExist();
                assertThat(Files.readString(tmp.resolve("err"))).isEmpty();
            } finally {
                p.destroyForcibly();
            }
        }
    }

    @Test
    void sigtermTheMomentTheSocketAppears_isAStopInOrder_exitZero_socketGone_noStackTrace() throws Exception {
        Config config = TestDaemon.config(tmp, "gpu=2(0 1)");
        for (int round = 0; round < 3; round++) {
            Files.deleteIfExists(config.socket());
            Process p = new ProcessBuilder(RSMAPD.toString(), "--config", tmp.resolve("rsmapd.conf").toString())
                    .redirectOutput(tmp.resolve("out").toFile()).redirectError(tmp.resolve("err").toFile()).start();
            try {
                long deadline = System.nanoTime() + GUARD.toNanos();
                while (!Files.exists(config.socket()) && p.isAlive() && System.nanoTime() < deadline) {
                    Thread.sleep(1); // 1 ms steps, not Polls' 10: the SIGTERM must come the moment the socket appears
                }
                assertThat(config.socket()).as("stderr: %s", Files.readString(tmp.resolve("err"))).exists();
                // SIGTERM while serve() may still be binding and reconciling: the stop's hook was in place
                // before, and waits for the socket to be whole before it closes it in order.
                p.destroy();
                assertThat(p.waitFor(GUARD.toSeconds(), TimeUnit.SECONDS)).isTrue();
                String err = Files.readString(tmp.resolve("err"));
                assertThat(p.exitValue()).as("rsmapd(8), EXIT STATUS; stderr: %s", err).isZero();
                assertThat(config.socket()).doesNotExist();
                assertThat(err).isEmpty();
            } finally {
                p.destroyForcibly();
            }
        }
    }
}
