// docs/gpus.md, "What a job sees", through execd-stub, the real hooks and cgroup v1 with two fake cards
// (mknod c 195 0 and 1) that the stand-in NVML reports: the job sees CUDA_VISIBLE_DEVICES with its card's
// UUID (its own value dropped) and SGE_HGR_gpu, opens its card (ENXIO: the fake node has no driver) and gets
// EPERM on the other; a realloc that adds the second card rewrites the job's environment file with both.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import rsmap.daemon.config.Config;
import rsmap.wire.Polls;

@Timeout(180)
class GpuIT {
    ExecdCell cell;

    @BeforeEach
    void setUp() throws Exception {
        cell = ExecdCell.nvml("rsmap-gpu").withShell();
        cell.gpus(2);
        cell.gpu().describe(GpuStub.cards(2));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (cell != null) {
            cell.close();
        }
    }

    private String open(int card) {
        return ExecdCell.open(cell.dir().resolve("dev/nvidia" + card));
    }

    @Test
    void aJobSeesItsCardsUuid_opensOnlyItsCard_andARealloc_rewritesItsEnvironmentFileWithBoth() throws Exception {
        Config config = cell.gpuConfig();
        String id = ProcessHandle.current().pid() + "1";
        Path grown = cell.marker("grown");
        Path checked = cell.marker("checked");
        try (Daemon daemon = TestDaemon.start(config)) {
            Process job = cell.job(config, id, "gpu=1", "echo \"cvd=$CUDA_VISIBLE_DEVICES\"; "
                    + "echo \"hgr=$SGE_HGR_gpu\"; echo \"card0: " + open(0) + "\"; echo \"card1: " + open(1) + "\"; "
                    + "rsmap-shell realloc --add gpu=1 --tag grow; echo \"grow=$?\"; echo \"grown1: " + open(1) + "\"; "
                    + "touch " + grown + "; " + ExecdCell.waitFor(checked), "CUDA_VISIBLE_DEVICES=GPU-the-jobs-own");
            Polls.await(Duration.ofSeconds(60), () -> Files.exists(grown) || !job.isAlive());
            Path envFile = config.stateDir().resolve("env").resolve(id);
            String env = Files.exists(envFile) ? Files.readString(envFile) : "(no " + envFile + ")";
            Files.writeString(checked, "");
            String out = ExecdCell.finish(job);
            assertThat(out).contains("cvd=" + GpuStub.uuid(0) + "\n").contains("hgr=0\n")
                    .contains("card0: " + ExecdCell.ENXIO + "\n").contains("card1: " + ExecdCell.EPERM + "\n")
                    .contains("grow=0\n").contains("grown1: " + ExecdCell.ENXIO + "\n").doesNotContain("the-jobs-own")
                    .endsWith("exit=0");
            assertThat(env).contains("SGE_HGR_gpu=0 1\n")
                    .contains("CUDA_VISIBLE_DEVICES=" + GpuStub.uuid(0) + "," + GpuStub.uuid(1) + "\n");
            assertThat(daemon.cluster().runningJobs()).isEmpty();
        }
    }
}
