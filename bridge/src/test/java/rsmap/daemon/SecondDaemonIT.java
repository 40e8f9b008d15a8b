// with real processes: a second bin/rsmapd on the same configuration is refused with
// exit 2 naming the first's pid, and the first keeps its socket; after a SIGKILL the lock is gone with
// the process and a new daemon starts.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Polls;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

@Timeout(120)
class SecondDaemonIT {
    @TempDir
    Path tmp;

    private Process rsmapd(String name) throws Exception {
        return new ProcessBuilder(RsmapdIT.RSMAPD.toString(), "--config", tmp.resolve("rsmapd.conf").toString())
                .redirectOutput(tmp.resolve(name + ".out").toFile()).redirectError(tmp.resolve(name + ".err").toFile())
                .start();
    }

    private static void awaitSocket(Config config, Process p) throws Exception {
        long until = System.nanoTime() + RsmapdIT.GUARD.toNanos();
        Polls.await(RsmapdIT.GUARD.plusSeconds(1), () -> { // the guard's assertion below speaks first
            if (Files.exists(config.socket())) {
                return true;
            }
            assertThat(p.isAlive()).as("rsmapd exited with %s", p.isAlive() ? "" : p.exitValue()).isTrue();
            assertThat(System.nanoTime()).as("socket within the guard").isLessThan(until);
            return false;
        });
    }

    private static String jobStart(Config config, String job) throws Exception {
        try (TestClient c = new TestClient(config.socket())) {
            c.call(Frame.of(1, Code.INIT.value(), Session.VERSION));
            Frame f = c.call(Frame.of(2, Code.JOB_START.value(), "{\"job\":\"" + job + "\",\"request\":\"gpu=1\"}"))
                    .get(0);
            return f.code() == Code.STATE.value() ? f.text(1) : "ERROR " + f.text(0);
        }
    }

    @Test
    void aSecondRsmapd_onTheSameConfiguration_exits2NamingTheFirst_andTheFirstServesOn() throws Exception {
        Config config = TestDaemon.config(tmp, "gpu=2(0 1)", "reconcile_interval = 0");
        Process first = rsmapd("first");
        try {
            awaitSocket(config, first);
            assertThat(jobStart(config, "1")).isEqualTo("SGE_HGR_gpu=0");
            Object inode = Files.getAttribute(config.socket(), "unix:ino");
            Process second = rsmapd("second");
            assertThat(second.waitFor(RsmapdIT.GUARD.toSeconds(), TimeUnit.SECONDS)).isTrue();
            assertThat(second.exitValue()).isEqualTo(2);
            assertThat(Files.readAllLines(tmp.resolve("second.err"))).containsExactly("error: state_dir "
                    + config.stateDir() + " is in use by another rsmapd (pid " + first.pid()
                    + "); one daemon per state directory");
            // The first one's socket is the same file, still answering.
            assertThat(Files.getAttribute(config.socket(), "unix:ino")).isEqualTo(inode);
            assertThat(jobStart(config, "2")).isEqualTo("SGE_HGR_gpu=1");
            first.destroyForcibly(); // SIGKILL: the kernel drops the lock with the process
            assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();
            Files.deleteIfExists(config.socket());
            Process third = rsmapd("third");
            try {
                awaitSocket(config, third);
                // It took over the journal: both grants held, none twice.
                assertThat(jobStart(config, "3")).startsWith("ERROR job 3 cannot be granted now");
            } finally {
                third.destroy();
                third.waitFor(30, TimeUnit.SECONDS);
            }
        } finally {
            first.destroyForcibly();
        }
    }
}
