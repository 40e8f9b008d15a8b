// Jobs with RSMAP_FILTER through the execd stand-in, the real C hook and a real rsmapd: a host
// that fails the filter reschedules the job (prolog 99, the attribute named), a filter that does not parse
// is the job's error (100), and a job whose filter this host passes runs.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import rsmap.daemon.config.Config;

class NodeFilterIT {
    ExecdCell cell;
    Config config;
    Daemon daemon;

    @BeforeEach
    void start() throws Exception {
        cell = ExecdCell.open("rsmap-filter");
        config = TestDaemon.config(cell.dir(), "gpu=2(0 1)", "socket_mode = 0666",
                "attributes = arch=x86_64, cpu_speed=1.8GHz, kernel=6.5.2", "filter = arch != \"ppc64le\"");
        daemon = TestDaemon.start(config);
    }

    @AfterEach
    void stop() throws Exception {
        daemon.close();
        cell.close();
    }

    /** A job through execd-stub with the hooks, RSMAP_REQUEST and RSMAP_FILTER set where not null. */
    private String job(String id, String request, String filter, String shell) throws Exception {
        return ExecdCell.finish(cell.stub(id).socket(config.socket()).request(request).env("RSMAP_FILTER", filter)
                .sh(shell), 30);
    }

    @Test
    void aFilterThisHostFails_reschedulesTheJob_namingTheAttribute_andNothingIsHeld() throws Exception {
        String r = job("1", "gpu=1", "cpu_speed > 2GHz", "echo job-ran");
        assertThat(r).doesNotContain("job-ran")
                .contains("rsmap-hook: filter: job filter fails on node01: cpu_speed=1.8GHz does not satisfy "
                        + "cpu_speed > 2GHz")
                .contains("prolog asked to reschedule").endsWith("exit=99");
        // PBS's alternatives design, use case 4: "Linux version 6.5 or higher, but none will be running 6.5.2"
        assertThat(job("2", null, "kernel >= 6.5 && kernel != 6.5.2", "echo job-ran")).doesNotContain("job-ran")
                .contains("kernel=6.5.2 does not satisfy kernel != 6.5.2").endsWith("exit=99");
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void aFilterThatDoesNotParse_isTheJobsError() throws Exception {
        assertThat(job("3", "gpu=1", "arch = \"x86_64\"", "echo job-ran")).doesNotContain("job-ran")
                .contains("rsmap-hook: filter: column 6: '=' is not an operator; compare with ==").endsWith("exit=100");
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void aFilterThisHostPasses_runsTheJobWithItsGrant_withOrWithoutARequest() throws Exception {
        assertThat(job("4", "gpu=1", "cpu_speed > 1GHz && arch == \"x86_64\"", "echo \"gpu=$SGE_HGR_gpu\""))
                .contains("gpu=0\n").endsWith("exit=0");
        assertThat(job("5", null, "!(host in [\"node02\"])", "echo ran")).contains("ran\n").endsWith("exit=0");
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }
}
