// The C hook against a real rsmapd: prolog grants and leaves SGE_HGR_* for the starter, exit codes as
// execd reads them (0 granted, 99 reschedule, 100 job error), epilog gives the grant back.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RsmapHookTest {
    static final Path HOOK = Path.of("target", "rsmap-hook");

    @TempDir
    Path tmp;
    Config config;
    Daemon daemon;

    record Run(int code, String out, String err) {
    }

    @BeforeEach
    void start() throws Exception {
        assertThat(HOOK).as("built by the Maven build (gcc)").isExecutable();
        config = TestDaemon.config(tmp, "gpu=4(0 0 1 1)");
        daemon = TestDaemon.start(config);
    }

    @AfterEach
    void stop() throws Exception {
        daemon.close();
    }

    private Run hook(String mode, Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(HOOK.toAbsolutePath().toString(), mode);
        pb.environment().clear();
        pb.environment().put("RSMAP_SOCKET", config.socket().toString());
        pb.environment().putAll(env);
        Process p = pb.start();
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        return new Run(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    @Test
    void prolog_grants_writesTheEnvironmentForTheStarter_epilogGivesBack() throws Exception {
        Path spool = Files.createDirectories(tmp.resolve("active_jobs/7.1"));
        Map<String, String> env = Map.of("JOB_ID", "7", "SGE_TASK_ID", "undefined", "NSLOTS", "1",
                "RSMAP_REQUEST", "gpu=2[same=id]", "SGE_JOB_SPOOL_DIR", spool.toString());
        Run prolog = hook("prolog", env);
        assertThat(prolog.code()).as(prolog.err()).isZero();
        assertThat(Files.readString(spool.resolve("rsmap.env"))).isEqualTo("SGE_HGR_gpu=0 0\n");
        assertThat(daemon.cluster().runningJobs()).containsExactly("7");
        Run epilog = hook("epilog", env);
        assertThat(epilog.code()).isZero();
        assertThat(daemon.cluster().runningJobs()).isEmpty();
        assertThat(hook("epilog", env).code()).as("again: nothing held, still fine").isZero();
    }

    @Test
    void prolog_hostCannotServeNow_asksExecdToReschedule() throws Exception {
        hook("prolog", Map.of("JOB_ID", "1", "NSLOTS", "1", "RSMAP_REQUEST", "gpu=3"));
        Run second = hook("prolog", Map.of("JOB_ID", "2", "NSLOTS", "1", "RSMAP_REQUEST", "gpu=2"));
        assertThat(second.code()).isEqualTo(99);
        assertThat(second.err()).startsWith("rsmap-hook: job 2 cannot be granted now: gpu: needs 2 free matching instances");
    }

    @Test
    void prolog_malformedRequest_putsTheJobInError() throws Exception {
        Run r = hook("prolog", Map.of("JOB_ID", "3", "NSLOTS", "1", "RSMAP_REQUEST", "gpu=1[scope=job]"));
        assertThat(r.code()).isEqualTo(100);
        assertThat(r.err()).isEqualTo("rsmap-hook: request: column 7: scope= needs same=\n");
    }

    @Test
    void prolog_withoutRequest_isANoOp_andWithoutDaemon_reschedules() throws Exception {
        assertThat(hook("prolog", Map.of("JOB_ID", "4")).code()).isZero();
        daemon.close();
        Run r = hook("prolog", Map.of("JOB_ID", "5", "RSMAP_REQUEST", "gpu=1"));
        assertThat(r.code()).isEqualTo(99);
        assertThat(r.err()).startsWith("rsmap-hook: cannot reach rsmapd");
        daemon = TestDaemon.start(config);
    }

    @Test
    void prolog_requestWithQuotesAndBackslashes_travelsIntact() throws Exception {
        Run r = hook("prolog", Map.of("JOB_ID", "6", "RSMAP_REQUEST", "gpu=1[id=\"\\x]"));
        // It parsed (a mangled one would be refused: exit 100) and matches no identifier here.
        assertThat(r.code()).isEqualTo(99);
        assertThat(r.err()).isEqualTo("rsmap-hook: job 6 cannot be granted now: gpu: needs 1 free matching instance, "
                + "0 available\n");
    }
}
