// docs/gpus.md, "Partitions on demand", through execd-stub, the real hooks and cgroup v1: a job asking for a
// 2g.20gb slice starts only once the stand-in NVML holds it, sees its MIG UUID in SGE_HGR_mig and
// CUDA_VISIBLE_DEVICES, opens its card's node and its slice's two capability nodes (ENXIO: fake nodes without
// a driver) and gets EPERM on every other capability node; at its end the slice is gone from the driver.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
class MigIT {
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
        shared = Files.createTempDirectory("rsmap-mig", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxrwxrwx")));
        ExecdStubIT.sh("chmod 1777 " + shared);
        hook = Files.copy(ExecdStubIT.HOOK, shared.resolve("rsmap-hook"));
        starter = Files.createSymbolicLink(shared.resolve("rsmap-starter"), Path.of("rsmap-hook"));
        Files.createDirectories(shared.resolve("dev"));
        ExecdStubIT.sh("mknod -m 666 " + shared.resolve("dev/nvidia0") + " c 195 0");
        ExecdStubIT.sh("mknod -m 666 " + shared.resolve("dev/nvidiactl") + " c 195 255");
        MigStub.caps(shared.resolve("mig-minors"), shared.resolve("dev"), true);
        GpuStub.use(shared.resolve("nvml.json"), MigStub.description(shared.resolve("mig-state.json"), ""));
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

    @Test
    void aJobAskingForASlice_seesItsMigUuid_opensOnlyItsCapabilityNodes_andTheSliceIsGoneAtItsEnd() throws Exception {
        Config config = TestDaemon.config(shared.resolve("d"), "NONE", "device_backend = cgroup-v1",
                "socket_mode = 0666", "reconcile_interval = 0", "nvml_library = " + GpuStub.LIBRARY, "gpu_map = gpu",
                "mig_map = mig", "mig_caps_file = " + shared.resolve("mig-minors"), "gpu_dev_dir = " + shared.resolve("dev"));
        MigStub.declare(config.complexes());
        String id = ProcessHandle.current().pid() + "7";
        Path listed = shared.resolve("listed");
        Path checked = shared.resolve("checked");
        Path state = shared.resolve("mig-state.json");
        try (Daemon daemon = TestDaemon.start(config)) {
            String caps = shared.resolve("dev/nvidia-caps").toString();
            List<String> cmd = new ArrayList<>(List.of(ExecdStubIT.STUB.toString(), "--spool",
                    shared.resolve("spool").toString(), "--host", "node01", "--job", id, "--cwd", "/", "--tmpdir",
                    shared.toString(), "--user", user, "--prolog", "root@" + hook + " prolog", "--starter",
                    starter.toString(), "--epilog", "root@" + hook + " epilog", "--", "sh", "-c",
                    "echo \"cvd=$CUDA_VISIBLE_DEVICES\"; echo \"hgr=$SGE_HGR_mig\"; "
                            + "echo \"card0: $(cat " + shared.resolve("dev/nvidia0") + " 2>&1 | sed 's/.*: //')\"; "
                            + "for n in " + caps + "/*; do echo \"$(basename $n): $(cat $n 2>&1 | sed 's/.*: //')\"; done; "
                            + "touch " + listed + "; " + ExecdStubIT.waitFor(checked)));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().put("RSMAP_SOCKET", config.socket().toString());
            pb.environment().put("RSMAP_REQUEST", "mig=1[profile=2g.20gb]");
            Process job = pb.start();
            for (int i = 0; i < 1200 && !Files.exists(listed) && job.isAlive(); i++) {
                Thread.sleep(50);
            }
            String during = Files.exists(state) ? Files.readString(state) : "{}";
            Files.writeString(checked, "");
            assertThat(job.waitFor(90, TimeUnit.SECONDS)).as("the job ends").isTrue();
            String out = new String(job.getInputStream().readAllBytes(), StandardCharsets.UTF_8) + "exit="
                    + job.exitValue();
            JsonNode slices = new ObjectMapper().readTree(during).path("instances");
            assertThat(slices).as(during).hasSize(1);
            int gi = slices.get(0).path("gi").asInt();
            String uuid = slices.get(0).path("uuid").asText();
            assertThat(out).contains("cvd=" + uuid + "\n").contains("hgr=" + uuid + "\n")
                    .contains("card0: " + ReallocIT.ENXIO + "\n").endsWith("exit=0");
            for (int g = 1; g < 16; g++) {
                for (int ci : new int[] {-1, 0}) {
                    String expected = g == gi ? ReallocIT.ENXIO : ReallocIT.EPERM;
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
        GpuStub.use(shared.resolve("nvml.json"), MigStub.description(shared.resolve("mig-state.json"),
                ",\"fail_create\":true"));
        Config config = TestDaemon.config(shared.resolve("d"), "NONE", "reconcile_interval = 0",
                "nvml_library = " + GpuStub.LIBRARY, "gpu_map = gpu", "mig_map = mig",
                "mig_caps_file = " + shared.resolve("mig-minors"), "gpu_dev_dir = " + shared.resolve("dev"));
        MigStub.declare(config.complexes());
        try (Daemon daemon = TestDaemon.start(config)) {
            for (String[] job : new String[][] {{"41", "mig=1[profile=1g.10gb]"}, {"42", "gpu=1"}}) {
                ProcessBuilder pb = new ProcessBuilder(RsmapHookIT.HOOK.toAbsolutePath().toString(), "prolog");
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
        }
    }
}
