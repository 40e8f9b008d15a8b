// The cgroup v1 backend against the real devices controller: a child process under a job's policy opens
// /dev/null, reaches its granted fake GPU (ENXIO: no driver) and is denied the other one (EPERM).
package rsmap.device.v1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;
import rsmap.device.FakeDevices;
import rsmap.map.Instance;

class CgroupV1BackendTest {
    final CgroupV1Backend backend = new CgroupV1Backend(CgroupV1Backend.DEFAULT_ROOT);
    final String job = "test-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    Path dir;
    Path gpu0;
    Path gpu1;

    @BeforeEach
    void setUp() throws Exception {
        FakeDevices.requireRoot("the cgroup v1 devices controller");
        assertThat(backend.availability().available()).as(backend.availability().reason()).isTrue();
        dir = FakeDevices.tempDir();
        gpu0 = FakeDevices.node(dir, "nvidia0", 195, 0);
        gpu1 = FakeDevices.node(dir, "nvidia1", 195, 1);
    }

    @AfterEach
    void cleanUp() throws Exception {
        // Cleanup leaves no cgroup directory behind, even when a test fails.
        if (dir != null) {
            backend.remove(job);
            assertThat(backend.cgroupOf(job)).doesNotExist();
            for (Path p : List.of(gpu0, gpu1)) {
                Files.deleteIfExists(p);
            }
            Files.delete(dir);
        }
    }

    private List<Instance> host() throws Exception {
        return FakeDevices.instances("gpu=2(g0[devices=" + gpu0 + ":rw] g1[devices=" + gpu1 + ":rw])");
    }

    /** Runs {@code cat path} in a shell that first moves itself into the job's cgroup; returns stderr. */
    private String openInJob(Path path) throws Exception {
        Path procs = backend.cgroupOf(job).resolve("cgroup.procs");
        Process p = new ProcessBuilder("sh", "-c", "echo $$ > " + procs + " && exec cat " + path + " >/dev/null")
                .start();
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        return new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8) + "exit=" + p.exitValue();
    }

    @Test
    void apply_closedPolicy_grantsTheGrantedDeviceAndDeniesTheOther() throws Exception {
        backend.apply(job, DevicePolicy.of(host().subList(0, 1)));
        assertThat(openInJob(Path.of("/dev/null"))).isEqualTo("exit=0");
        assertThat(openInJob(gpu0)).contains("No such device or address"); // allowed: ENXIO from the driver-less node
        assertThat(openInJob(gpu1)).contains("Operation not permitted"); // denied by the policy: EPERM
        assertThat(Files.readString(backend.cgroupOf(job).resolve("devices.list")))
                .contains("c 195:0 rw").doesNotContain("c 195:1").doesNotContain("a *:* rwm");
    }

    @Test
    void apply_movesTheGivenProcessesIn_andRemoveMovesThemOut() throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "30").start();
        try {
            backend.apply(job, DevicePolicy.of(host()), sleeper.pid());
            assertThat(Files.readAllLines(backend.cgroupOf(job).resolve("cgroup.procs")))
                    .contains(Long.toString(sleeper.pid()));
            backend.remove(job);
            assertThat(backend.cgroupOf(job)).doesNotExist();
            assertThat(sleeper.isAlive()).isTrue();
        } finally {
            sleeper.destroyForcibly().waitFor();
        }
    }

    @Test
    void apply_openPolicy_createsNothing() throws Exception {
        backend.apply(job, DevicePolicy.OPEN);
        assertThat(backend.cgroupOf(job)).doesNotExist();
    }

    @Test
    void apply_failure_isAnError_andLeavesNothingBehind() throws Exception {
        assertThatThrownBy(() -> backend.apply(job, DevicePolicy.of(host()), 999_999_999L))
                .isInstanceOf(DevicePolicyException.class).hasMessageContaining("cannot apply");
        assertThat(backend.cgroupOf(job)).doesNotExist();
    }

    @Test
    void cgroupOf_unsafeJobName_isRefused() {
        assertThatThrownBy(() -> backend.cgroupOf("../etc")).isInstanceOf(DevicePolicyException.class);
        assertThatThrownBy(() -> backend.cgroupOf("..")).isInstanceOf(DevicePolicyException.class);
    }

    @Test
    void remove_unknownJob_isFine() throws Exception {
        backend.remove("never-applied");
    }
}
