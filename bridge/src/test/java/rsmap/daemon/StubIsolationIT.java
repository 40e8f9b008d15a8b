// the daemon and its protocol "Done when", through execd-stub, the real hooks and a real rsmapd with the cgroup v1 backend: a
// job granted gpu0 opens its fake node (ENXIO: no driver) and is denied gpu1's (EPERM); a job killed
// without its epilog is freed by reconciliation, its cgroup removed.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class StubIsolationIT {
    static final Path DEVICES = Path.of("/sys/fs/cgroup/devices");
    Path shared;
    Config config;
    Daemon daemon;
    Path gpu0;
    Path gpu1;
    final String base = Long.toString(ProcessHandle.current().pid());

    @BeforeEach
    void start() throws Exception {
        String why = null;
        if (!ExecdStubIT.sh("id -u").strip().equals("0")) {
            why = "device isolation and switching users need root";
        } else if (!Files.isRegularFile(DEVICES.resolve("devices.allow"))) {
            why = "no cgroup v1 devices controller at " + DEVICES;
        }
        if (why != null) {
            if ("true".equals(System.getenv("CI"))) {
                fail(why);
            }
            Assumptions.abort(why);
        }
        shared = Files.createTempDirectory("rsmap-iso", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        gpu0 = shared.resolve("nvidia0");
        gpu1 = shared.resolve("nvidia1");
        ExecdStubIT.sh("mknod -m 666 " + gpu0 + " c 195 0 && mknod -m 666 " + gpu1 + " c 195 1");
        Files.copy(ExecdStubIT.HOOK, shared.resolve("rsmap-hook"));
        Files.createSymbolicLink(shared.resolve("rsmap-starter"), Path.of("rsmap-hook"));
        config = TestDaemon.config(shared, "gpu=2(gpu0[devices=" + gpu0 + ":rw] gpu1[devices=" + gpu1 + ":rw])",
                "device_backend = cgroup-v1", "socket_mode = 0666", "reconcile_interval = 0");
        daemon = TestDaemon.start(config);
    }

    @AfterEach
    void stop() throws Exception {
        if (daemon != null) {
            daemon.close();
        }
        if (shared != null) {
            try (Stream<Path> all = Files.walk(shared)) {
                for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    private Process job(String id, String request, String shell) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(ExecdStubIT.STUB.toString(), "--spool",
                shared.resolve("spool").toString(), "--host", "node01", "--job", id, "--cwd", "/", "--tmpdir",
                shared.toString(), "--user", ExecdStubIT.jobUser(),
                "--prolog", "root@" + shared.resolve("rsmap-hook") + " prolog",
                "--starter", shared.resolve("rsmap-starter").toString(),
                "--epilog", "root@" + shared.resolve("rsmap-hook") + " epilog", "--", "sh", "-c", shell));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("RSMAP_SOCKET", config.socket().toString());
        pb.environment().put("RSMAP_REQUEST", request);
        return pb.start();
    }

    private static String finish(Process p) throws Exception {
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8) + "exit=" + p.exitValue();
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
        long pid = 0;
        for (int i = 0; i < 400 && pid == 0; i++) {
            Job j;
            synchronized (daemon) {
                j = daemon.jobs().get(id);
            }
            pid = j == null || j.pids().isEmpty() ? 0 : j.pids().keySet().iterator().next();
            Thread.sleep(25);
        }
        assertThat(pid).as("the starter entered the job").isPositive();
        assertThat(Files.readString(DEVICES.resolve("rsmap").resolve(id).resolve("cgroup.procs")).strip())
                .isEqualTo(Long.toString(pid));
        stub.destroyForcibly(); // execd gone: no epilog will run
        stub.waitFor();
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        for (int i = 0; i < 200 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false); i++) {
            Thread.sleep(25);
        }
        assertThat(daemon.cluster().runningJobs()).containsExactly(id);
        daemon.reconcile();
        assertThat(daemon.cluster().runningJobs()).isEmpty();
        assertThat(daemon.log()).contains("released job " + id + " (its process " + pid + " has exited)");
        assertThat(DEVICES.resolve("rsmap").resolve(id)).doesNotExist();
    }
}
