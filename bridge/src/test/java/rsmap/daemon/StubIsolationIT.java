// the daemon and its protocol "Done when", through execd-stub, the real hooks and a real rsmapd with the cgroup v1 backend: a
// job granted gpu0 opens its fake node (ENXIO: no driver) and is denied gpu1's (EPERM); a job killed
// without its epilog is freed by reconciliation, its cgroup removed.
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
import rsmap.daemon.state.Job;
import rsmap.wire.Polls;

@Timeout(120)
class StubIsolationIT {
    static final Path DEVICES = Path.of("/sys/fs/cgroup/devices");
    ExecdCell cell;
    Config config;
    Daemon daemon;
    Path gpu0;
    Path gpu1;
    final String base = Long.toString(ProcessHandle.current().pid());

    @BeforeEach
    void start() throws Exception {
        // device isolation and switching users need root and a cgroup v1 devices controller
        cell = ExecdCell.closed("rsmap-iso");
        gpu0 = cell.node("nvidia0", 195, 0);
        gpu1 = cell.node("nvidia1", 195, 1);
        config = TestDaemon.config(cell.dir(), "gpu=2(gpu0[devices=" + gpu0 + ":rw] gpu1[devices=" + gpu1 + ":rw])",
                "device_backend = cgroup-v1", "socket_mode = 0666", "reconcile_interval = 0");
        daemon = TestDaemon.start(config);
    }

    @AfterEach
    void stop() throws Exception {
        if (daemon != null) {
            daemon.close();
        }
        if (cell != null) {
            cell.close();
        }
    }

    private Process job(String id, String request, String shell) throws Exception {
        return cell.job(config, id, request, shell);
    }

    private static String finish(Process p) throws Exception {
        return ExecdCell.finish(p, 60);
    }

    @Test
    void aJobGrantedGpu0_opensItsNode_andIsDeniedGpu1s() throws Exception {
        String id = base + "1";
        String out = finish(job(id, "gpu=1[id=gpu0]", "echo \"seen=$SGE_HGR_gpu\"; cat " + gpu0 + "; cat " + gpu1
                + "; cat /dev/null && echo null-ok"));
        assertThat(out).contains("seen=gpu0\n");
        assertThat(out).contains(gpu0 + ": No such device or address"); // allowed: the driver-less node answers ENXIO
        assertThat(out).contains(gpu1 + ": Operation not permitted");   // denied by the policy: EPERM
        assertThat(out).contains("null-ok").endsWith("exit=0");
        assertThat(daemon.cluster().runningJobs()).isEmpty();
        assertThat(DEVICES.resolve("rsmap").resolve(id)).doesNotExist();
    }

    @Test
    void aJobKilledWithoutItsEpilog_isFreedByReconciliation() throws Exception {
        String id = base + "2";
        Process stub = job(id, "gpu=1", "echo started; exec sleep 300");
        long[] entered = {0};
        Polls.await(Duration.ofSeconds(10), () -> {
            Job j;
            synchronized (daemon) {
                j = daemon.jobs().get(id);
            }
            entered[0] = j == null || j.pids().isEmpty() ? 0 : j.pids().keySet().iterator().next();
            return entered[0] != 0;
        });
        long pid = entered[0];
        assertThat(pid).as("the starter entered the job").isPositive();
        assertThat(Files.readString(DEVICES.resolve("rsmap").resolve(id).resolve("cgroup.procs")).strip())
                .isEqualTo(Long.toString(pid));
        stub.destroyForcibly(); // execd gone: no epilog will run
        stub.waitFor();
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        Polls.await(Duration.ofSeconds(5), () -> !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
        assertThat(daemon.cluster().runningJobs()).containsExactly(id);
        daemon.reconcile();
        assertThat(daemon.cluster().runningJobs()).isEmpty();
        assertThat(daemon.log()).contains("released job " + id + " (its process " + pid + " has exited)");
        assertThat(DEVICES.resolve("rsmap").resolve(id)).doesNotExist();
    }
}
