// docs/gpus.md, "Partitions on demand", through execd-stub, the real hooks and cgroup v1: a job asking for a
// 2g.20gb slice starts only once the stand-in NVML holds it, sees its MIG UUID in SGE_HGR_mig and
// CUDA_VISIBLE_DEVICES, opens its card's node and its slice's two capability nodes (ENXIO: fake nodes without
// a driver) and gets EPERM on every other capability node; at its end the slice is gone from the driver.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import rsmap.daemon.config.Config;
import rsmap.wire.Polls;

@Timeout(180)
class MigIT {
    ExecdCell cell;

    @BeforeEach
    void setUp() throws Exception {
        cell = ExecdCell.nvml("rsmap-mig");
        cell.gpus(1);
        cell.node("dev/nvidiactl", 195, 255);
        cell.gpu().migCaps(true);
        cell.gpu().describeMig("");
    }

    @AfterEach
    void tearDown() throws Exception {
        if (cell != null) {
            cell.close();
        }
    }

    @Test
    void aJobAskingForASlice_seesItsMigUuid_opensOnlyItsCapabilityNodes_andTheSliceIsGoneAtItsEnd() throws Exception {
        Config config = cell.migConfig();
        String id = ProcessHandle.current().pid() + "7";
        Path listed = cell.marker("listed");
        Path checked = cell.marker("checked");
        Path state = cell.gpu().migState();
        try (Daemon daemon = TestDaemon.start(config)) {
            String caps = cell.dir().resolve("dev/nvidia-caps").toString();
            Process job = cell.job(config, id, "mig=1[profile=2g.20gb]", "echo \"cvd=$CUDA_VISIBLE_DEVICES\"; "
                    + "echo \"hgr=$SGE_HGR_mig\"; "
                    + "echo \"card0: " + ExecdCell.open(cell.dir().resolve("dev/nvidia0")) + "\"; "
                    + "for n in " + caps + "/*; do echo \"$(basename $n): $(cat $n 2>&1 | sed 's/.*: //')\"; done; "
                    + "touch " + listed + "; " + ExecdCell.waitFor(checked));
            Polls.await(Duration.ofSeconds(60), () -> Files.exists(listed) || !job.isAlive());
            String during = Files.exists(state) ? Files.readString(state) : "{}";
            Files.writeString(checked, "");
            String out = ExecdCell.finish(job);
            JsonNode slices = new ObjectMapper().readTree(during).path("instances");
            assertThat(slices).as(during).hasSize(1);
            int gi = slices.get(0).path("gi").asInt();
            String uuid = slices.get(0).path("uuid").asText();
            assertThat(out).contains("cvd=" + uuid + "\n").contains("hgr=" + uuid + "\n")
                    .contains("card0: " + ExecdCell.ENXIO + "\n").endsWith("exit=0");
            for (int g = 1; g < 16; g++) {
                for (int ci : new int[] {-1, 0}) {
                    String expected = g == gi ? ExecdCell.ENXIO : ExecdCell.EPERM;
                    assertThat(out).as(out).contains("nvidia-cap" + MigStub.capMinor(g, ci) + ": " + expected + "\n");
                }
            }
            assertThat(new ObjectMapper().readTree(Files.readString(state)).path("instances")).as("destroyed at its end")
                    .isEmpty();
            assertThat(daemon.cluster().runningJobs()).isEmpty();
        }
    }

    @Test
    void aFailedCreation_theProlog_exits99NamingNvmlsError_andTheCardIsTainted() throws Exception {
        cell.gpu().describeMig(",\"fail_create\":true");
        Config config = cell.gpu().migConfig(cell.dir().resolve("d"), "NONE", "reconcile_interval = 0");
        try (Daemon daemon = TestDaemon.start(config)) {
            for (String[] job : new String[][] {{"41", "mig=1[profile=1g.10gb]"}, {"42", "gpu=1"}}) {
                ProcessBuilder pb = new ProcessBuilder(ExecdCell.HOOK.toString(), "prolog");
                pb.environment().clear();
                pb.environment().putAll(java.util.Map.of("RSMAP_SOCKET", config.socket().toString(), "JOB_ID", job[0],
                        "SGE_TASK_ID", "undefined", "NSLOTS", "1", "USER", "root", "RSMAP_REQUEST", job[1]));
                Process h = pb.start();
                String err = new String(h.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(h.waitFor(60, TimeUnit.SECONDS)).isTrue();
                assertThat(h.exitValue()).as(err).isEqualTo(99);
                assertThat(err).contains(job[0].equals("41") ? "NVML_ERROR_INSUFFICIENT_RESOURCES" : "cannot be granted now");
            }
            assertThat(daemon.cluster().runningJobs()).isEmpty();
            java.io.StringWriter status = new java.io.StringWriter(); // docs/health.md: the taint's source is mig
            assertThat(rsmap.cli.Main.run(new java.io.PrintWriter(status), new java.io.PrintWriter(new java.io.StringWriter()),
                    "status", "--socket", config.socket().toString())).isZero();
            assertThat(status.toString()).containsPattern("\n  0 +free +tainted \\(mig: slice 0:1g\\.10gb@\\d cannot be "
                    + "created: .*NVML_ERROR_INSUFFICIENT_RESOURCES");
        }
    }
}
