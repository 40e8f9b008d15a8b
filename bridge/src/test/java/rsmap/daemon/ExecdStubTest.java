// Jobs started through the execd stand-in against a real rsmapd and the real C hook: what each job saw,
// and what the daemon holds afterwards (issue 5 "Done when").
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExecdStubTest {
    static final Path STUB = Path.of("..", "native-stubs", "target", "execd-stub").toAbsolutePath().normalize();
    static final Path HOOK = Path.of("target", "rsmap-hook").toAbsolutePath();

    @TempDir
    Path tmp;
    Config config;
    Daemon daemon;

    @BeforeEach
    void start() throws Exception {
        assertThat(STUB).as("built by the native-stubs module").isExecutable();
        config = TestDaemon.config(tmp, "gpu=4(0 0 1 1)");
        daemon = TestDaemon.start(config);
    }

    @AfterEach
    void stop() throws Exception {
        daemon.close();
    }

    /** Starts a job through execd-stub with the hooks; its command writes what it saw to {@code out}. */
    private Process job(String id, String request, String shell, String... extraEnv) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(STUB.toString(), "--spool", tmp.resolve("spool").toString(),
                "--host", "node01", "--job", id, "--prolog", HOOK + " prolog", "--starter", HOOK + " starter",
                "--epilog", HOOK + " epilog", "--", "sh", "-c", shell));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("RSMAP_SOCKET", config.socket().toString());
        pb.environment().put("RSMAP_REQUEST", request);
        for (String kv : extraEnv) {
            pb.environment().put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        return pb.start();
    }

    private static String finish(Process p) throws Exception {
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8) + "exit=" + p.exitValue();
    }

    @Test
    void twoJobsSharingACard_seeTheSameIdentifier_andEverythingIsGivenBack() throws Exception {
        Path a = tmp.resolve("a");
        Path b = tmp.resolve("b");
        Path go = tmp.resolve("go");
        Process first = job("1", "gpu=1", "echo \"$SGE_HGR_gpu\" > " + a + "; while [ ! -e " + go + " ]; do sleep 0.05; done");
        for (int i = 0; i < 200 && !Files.exists(a); i++) {
            Thread.sleep(50);
        }
        String second = finish(job("2", "gpu=1", "echo \"$SGE_HGR_gpu\" > " + b));
        Files.writeString(go, "");
        assertThat(finish(first)).endsWith("exit=0");
        assertThat(second).endsWith("exit=0");
        // seed 002: shares of one card; the policy puts a single share onto the partly used card
        assertThat(Files.readString(a).strip()).isEqualTo("0");
        assertThat(Files.readString(b).strip()).isEqualTo("0");
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void aJobBringingItsOwnSgeHgr_seesOnlyItsGrant() throws Exception {
        Path out = tmp.resolve("env");
        String r = finish(job("3", "gpu=2[same=id]", "env | grep '^SGE_HGR_' | sort > " + out, "SGE_HGR_gpu=evil",
                "SGE_HGR_nic=ib9"));
        assertThat(r).endsWith("exit=0");
        assertThat(Files.readString(out)).isEqualTo("SGE_HGR_gpu=0 0\n");
    }

    @Test
    void aJobThatCannotBeServed_isRescheduled_andOneWithABadRequestGoesToError() throws Exception {
        assertThat(finish(job("4", "gpu=8", "true"))).contains("prolog asked to reschedule").endsWith("exit=99");
        assertThat(finish(job("5", "gpu=1[scope=job]", "true")))
                .contains("rsmap-hook: request: column 7: scope= needs same=").endsWith("exit=100");
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }
}
