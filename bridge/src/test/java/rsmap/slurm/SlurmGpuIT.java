// docs/gpus.md, "What a job sees", through a real Slurm job: rsmapd builds gpu from the stand-in NVML (two
// fake cards, mknod c 195 0 and 1), the SPANK plugin sets CUDA_VISIBLE_DEVICES to the UUID of the job's card
// (its own value dropped) and SGE_HGR_gpu, and the cgroup v1 device policy lets it open only its card.
package rsmap.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import rsmap.daemon.GpuStub;
import rsmap.slurm.SlurmCluster.Run;

class SlurmGpuIT extends OneSlurmCluster {
    private static final String SHOW = "echo \"CVD=$CUDA_VISIBLE_DEVICES\"; env | grep ^SGE_HGR_gpu; "
            + "for d in \"$@\"; do cat \"$d\" 2>&1 | sed 's/^/OPEN /'; done";

    @Override
    boolean discovered() {
        return true;
    }

    @Test
    void aSlurmJob_seesItsCardsUuid_andSgeHgrGpu_andOpensOnlyItsCard() throws Exception {
        Run r = cluster.asNobody(Map.of("CUDA_VISIBLE_DEVICES", "GPU-the-jobs-own"), "srun", "-D", cluster.work.toString(),
                "--rsmap=gpu=1", "sh", "-c", SHOW, "show", cluster.device(0).toString(), cluster.device(1).toString());
        assertThat(r.code()).as("%s\n%s", r, cluster.logs()).isZero();
        assertThat(r.lines("SGE_HGR_gpu=")).hasSize(1).first().matches(l -> l.equals("SGE_HGR_gpu=0")
                || l.equals("SGE_HGR_gpu=1"));
        int card = r.out().contains("SGE_HGR_gpu=0\n") ? 0 : 1;
        assertThat(r.lines("CVD=")).containsExactly("CVD=" + GpuStub.uuid(card));
        assertThat(r.lines("OPEN ")).containsExactlyInAnyOrder(
                "OPEN cat: " + cluster.device(card) + ": No such device or address", // ENXIO: allowed, no driver
                "OPEN cat: " + cluster.device(1 - card) + ": Operation not permitted"); // EPERM: the devices cgroup
        assertThat(cluster.awaitReleased(null)).as("the grant is given back at the job's end").isEmpty();
    }
}
