// The Grid Engine jobs on Open Cluster Scheduler 9.1.4, built from the upstream source by .ci/build-ocs.sh.
// The map is a plain consumable in OCS (not OCS's own RSMAP type): OCS books amounts, rsmapd assigns the
// instances and sets SGE_HGR_* (docs/integration-ocs.md, "Who decides"); one test leaves a map as OCS's RSMAP.
package rsmap.gridengine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import rsmap.gridengine.GridEngineCluster.Run;

class OpenClusterSchedulerIT extends GridEngineIT {
    @Override
    Release release() {
        return Release.OCS_9_1;
    }

    /**
     * fpga as RSMAP in OCS too: OCS picks its own ids (x, y) and writes SGE_HGR_fpga into the job's spooled
     * environment; the starter drops it, and the job sees rsmapd's (f0, f1) only.
     */
    @Test
    void aMapLeftAsRsmapInOcs_reachesTheJobWithRsmapdsIds_notOcss() throws Exception {
        Run c = cluster.run("sh", "-c", "qconf -sc | grep -v '^#' >" + cluster.dir.resolve("complexes.ocs")
                + " && echo 'fpga fpga RSMAP <= YES YES 0 0' >>" + cluster.dir.resolve("complexes.ocs")
                + " && qconf -Mc " + cluster.dir.resolve("complexes.ocs")
                + " && qconf -aattr exechost complex_values 'fpga=2(x y)' " + cluster.host);
        assertThat(c.code()).as("%s", c).isZero();
        Run r = qsub(Map.of("RSMAP_REQUEST", "fpga=1"), "ocsrsmap", "-sync", "y", "-l", "fpga=1", "-v", "RSMAP_REQUEST",
                script("fpga.sh", "echo JOB $(env | grep ^SGE_HGR_fpga=); grep -a ^SGE_HGR_fpga= $SGE_JOB_SPOOL_DIR/environment"
                        + " | sed 's/^/SPOOL /'").toString());
        assertThat(r.code()).as("%s\n%s", r, cluster.logs()).isZero();
        assertThat(output("ocsrsmap")).containsPattern("(?m)^SPOOL SGE_HGR_fpga=[xy]$")
                .containsPattern("(?m)^JOB SGE_HGR_fpga=f[01]$");
    }
}
