// with a real bin/rsmapd and the real hooks: an execd_spool without active_jobs stops
// the daemon at start with the file and line; active_jobs vanishing at run time releases nothing over
// several reconcile intervals (each logged), and a job that positively ended is released once it is back.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
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
class SpoolCheckIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;

    private Process rsmapd() throws Exception {
        return new ProcessBuilder(RsmapdIT.RSMAPD.toString(), "--config", tmp.resolve("rsmapd.conf").toString())
                .redirectOutput(tmp.resolve("out").toFile()).redirectError(tmp.resolve("err").toFile()).start();
    }

    private int hook(Config config, String mode, String job) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(ExecdCell.HOOK.toString(), mode);
        pb.environment().clear();
        pb.environment().putAll(Map.of("RSMAP_SOCKET", config.socket().toString(), "JOB_ID", job, "USER", "alice",
                "RSMAP_REQUEST", "gpu=1", "PATH", "/usr/bin:/bin"));
        Process h = pb.redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        assertThat(h.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return h.exitValue();
    }

    private String jobs(Config config) throws Exception {
        try (TestClient c = new TestClient(config.socket())) {
            c.call(Frame.of(1, Code.INIT.value(), Session.VERSION));
            StringBuilder ids = new StringBuilder();
            JSON.readTree(c.call(Frame.of(2, Code.QUERY.value())).get(0).text(0)).path("jobs")
                    .forEach(j -> ids.append(ids.length() == 0 ? "" : " ").append(j.path("job").asText()));
            return ids.toString();
        }
    }

    @Test
    void aSpoolWithoutActiveJobs_stopsRsmapdWithFileAndLine() throws Exception {
        Config config = TestDaemon.config(tmp, "gpu=2(g0 g1)", "execd_spool = /nonexistent/spool");
        Process p = rsmapd();
        assertThat(p.waitFor(RsmapdIT.GUARD.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(2);
        assertThat(Files.readAllLines(tmp.resolve("err"))).singleElement().asString()
                .startsWith("error: " + tmp.resolve("rsmapd.conf") + ": line " + config.lineOf("execd_spool")
                        + ": execd_spool: /nonexistent/spool/active_jobs is not a directory");
        assertThat(config.socket()).doesNotExist();
    }

    @Test
    void activeJobsVanishing_releasesNothing_andAPositivelyEndedJobIsReleasedOnceItIsBack() throws Exception {
        Path active = tmp.resolve("spool/active_jobs");
        Files.createDirectories(active.resolve("7.1"));
        Files.createDirectories(active.resolve("8.1"));
        Config config = TestDaemon.config(tmp, "gpu=2(g0 g1)", "execd_spool = spool", "reconcile_interval = 1");
        Process p = rsmapd();
        try {
            Polls.until("rsmapd's socket", Duration.ofSeconds(12), () -> Files.exists(config.socket()));
            assertThat(hook(config, "prolog", "7")).isZero();
            assertThat(hook(config, "prolog", "8")).isZero();
            Path moved = tmp.resolve("spool/moved");
            Files.move(active, moved); // an NFS hiccup, an admin's mv: says nothing about the jobs
            Thread.sleep(3_500); // the thing tested: three reconcile intervals release nothing
            assertThat(jobs(config)).isEqualTo("7 8");
            assertThat(Files.readString(tmp.resolve("err"))).contains("reconciliation skipped: " + active);
            Files.move(moved, active);
            Files.delete(active.resolve("8.1")); // execd removed job 8: it ended without its epilog
            Polls.await(Duration.ofSeconds(30), () -> jobs(config).equals("7"));
            assertThat(jobs(config)).isEqualTo("7");
            assertThat(hook(config, "epilog", "7")).isZero();
            assertThat(jobs(config)).isEmpty();
        } finally {
            p.destroy();
            p.waitFor(20, TimeUnit.SECONDS);
        }
    }
}
