// docs/gpus.md, "What a job sees", through execd-stub, the real hooks and cgroup v1 with two fake cards
// (mknod c 195 0 and 1) that the stand-in NVML reports: the job sees CUDA_VISIBLE_DEVICES with its card's
// UUID (its own value dropped) and SGE_HGR_gpu, opens its card (ENXIO: the fake node has no driver) and gets
// EPERM on the other; a realloc that adds the second card rewrites the job's environment file with both.
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

@Timeout(180)
class GpuIT {
    Path shared;
    Path hook;
    Path starter;
    String user;

    @BeforeEach
    void setUp() throws Exception {
        user = ExecdStubIT.jobUser();
        if (!Files.isRegularFile(Path.of("/sys/fs/cgroup/devices/devices.allow"))) {
            if ("true".equals(System.getenv("CI"))) {
                fail("no cgroup v1 devices controller at /sys/fs/cgroup/devices");
            }
            Assumptions.abort("no cgroup v1 devices controller at /sys/fs/cgroup/devices");
        }
        assertThat(GpuStub.LIBRARY).as("built by the native-stubs module").isRegularFile();
        shared = Files.createTempDirectory("rsmap-gpu", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxrwxrwx")));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
        ExecdStubIT.sh("chmod 1777 " + shared); // sticky, as /tmp: a state directory below it is trusted
        hook = Files.copy(ExecdStubIT.HOOK, shared.resolve("rsmap-hook"));
        starter = Files.createSymbolicLink(shared.resolve("rsmap-starter"), Path.of("rsmap-hook"));
        Files.copy(ReallocIT.SHELL, shared.resolve("rsmap-shell"));
        Files.createDirectories(shared.resolve("dev"));
        for (int i = 0; i < 2; i++) {
            ExecdStubIT.sh("mknod -m 666 " + shared.resolve("dev/nvidia" + i) + " c 195 " + i);
        }
        GpuStub.use(shared.resolve("nvml.json"), GpuStub.cards(2));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (shared == null) {
            return;
        }
        try (Stream<Path> all = Files.walk(shared)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private String open(int card) {
        return "$(cat " + shared.resolve("dev/nvidia" + card) + " 2>&1 | sed 's/.*: //')";
    }

    @Test
    void aJobSeesItsCardsUuid_opensOnlyItsCard_andARealloc_rewritesItsEnvironmentFileWithBoth() throws Exception {
        Config config = TestDaemon.config(shared.resolve("d"), "NONE", "device_backend = cgroup-v1",
                "socket_mode = 0666", "reconcile_interval = 0", "nvml_library = " + GpuStub.LIBRARY, "gpu_map = gpu",
                "gpu_dev_dir = " + shared.resolve("dev"));
        String id = ProcessHandle.current().pid() + "1";
        Path grown = shared.resolve("grown");
        Path checked = shared.resolve("checked");
        try (Daemon daemon = TestDaemon.start(config)) {
            List<String> cmd = new ArrayList<>(List.of(ExecdStubIT.STUB.toString(), "--spool",
                    shared.resolve("spool").toString(), "--host", "node01", "--job", id, "--cwd", "/", "--tmpdir",
                    shared.toString(), "--user", user, "--prolog", "root@" + hook + " prolog", "--starter",
                    starter.toString(), "--epilog", "root@" + hook + " epilog", "--", "sh", "-c",
                    "echo \"cvd=$CUDA_VISIBLE_DEVICES\"; echo \"hgr=$SGE_HGR_gpu\"; echo \"card0: " + open(0) + "\"; "
                            + "echo \"card1: " + open(1) + "\"; rsmap-shell realloc --add gpu=1 --tag grow; "
                            + "echo \"grow=$?\"; echo \"grown1: " + open(1) + "\"; touch " + grown + "; "
                            + ExecdStubIT.waitFor(checked)));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().put("RSMAP_SOCKET", config.socket().toString());
            pb.environment().put("RSMAP_REQUEST", "gpu=1");
            pb.environment().put("CUDA_VISIBLE_DEVICES", "GPU-the-jobs-own");
            pb.environment().put("PATH", shared + ":" + System.getenv("PATH"));
            Process job = pb.start();
            for (int i = 0; i < 1200 && !Files.exists(grown) && job.isAlive(); i++) {
                Thread.sleep(50);
            }
            Path envFile = config.stateDir().resolve("env").resolve(id);
            String env = Files.exists(envFile) ? Files.readString(envFile) : "(no " + envFile + ")";
            Files.writeString(checked, "");
            assertThat(job.waitFor(90, TimeUnit.SECONDS)).as("the job ends").isTrue();
            String out = new String(job.getInputStream().readAllBytes(), StandardCharsets.UTF_8) + "exit="
                    + job.exitValue();
            assertThat(out).contains("cvd=" + GpuStub.uuid(0) + "\n").contains("hgr=0\n")
                    .contains("card0: " + ReallocIT.ENXIO + "\n").contains("card1: " + ReallocIT.EPERM + "\n")
                    .contains("grow=0\n").contains("grown1: " + ReallocIT.ENXIO + "\n").doesNotContain("the-jobs-own")
                    .endsWith("exit=0");
            assertThat(env).contains("SGE_HGR_gpu=0 1\n")
                    .contains("CUDA_VISIBLE_DEVICES=" + GpuStub.uuid(0) + "," + GpuStub.uuid(1) + "\n");
            assertThat(daemon.cluster().runningJobs()).isEmpty();
        }
    }
}
