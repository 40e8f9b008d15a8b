// Backend selection: explicit names, and auto-detection of systemd and cgroup v1.
package rsmap.device;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.device.v1.CgroupV1Backend;

class BackendsTest {
    @TempDir
    Path tmp;

    /** A backend that says whether it can run, nothing more. */
    record Stub(String name, boolean ok) implements DeviceBackend {
        @Override
        public Availability availability() {
            return ok ? Availability.yes() : Availability.no(name + " unreachable");
        }

        @Override
        public void apply(String job, DevicePolicy policy, long... pids) {
        }

        @Override
        public void remove(String job) {
        }
    }

    private DeviceBackend auto(String pid1, boolean systemdOk, boolean v1Ok) throws Exception {
        Path comm = Files.writeString(tmp.resolve("comm"), pid1 + "\n");
        return Backends.choose("auto", () -> new Stub("systemd", systemdOk), () -> new Stub("cgroup-v1", v1Ok), comm);
    }

    @Test
    void auto_systemdHost_choosesSystemd() throws Exception {
        assertThat(auto("systemd", true, true).name()).isEqualTo("systemd");
    }

    @Test
    void auto_noSystemd_choosesCgroupV1() throws Exception {
        assertThat(auto("sh", true, true).name()).isEqualTo("cgroup-v1");
        assertThat(auto("systemd", false, true).name()).isEqualTo("cgroup-v1");
    }

    @Test
    void auto_nothingAvailable_isAnErrorWithBothReasons() {
        assertThatThrownBy(() -> auto("systemd", false, false)).isInstanceOf(DevicePolicyException.class)
                .hasMessageContaining("systemd: systemd unreachable").hasMessageContaining("cgroup-v1: cgroup-v1 unreachable");
    }

    @Test
    void choose_byName() throws Exception {
        assertThat(Backends.choose("dry-run")).isInstanceOf(DryRunBackend.class);
        assertThat(Backends.choose("cgroup-v1")).isInstanceOf(CgroupV1Backend.class);
        assertThatThrownBy(() -> Backends.choose("selinux")).hasMessageContaining("unknown device backend 'selinux'");
    }

    @Test
    void auto_onThisMachine_findsTheV1Controller() throws Exception {
        FakeDevices.requireRoot("the cgroup v1 devices controller");
        assertThat(Backends.choose("auto").name()).isIn("systemd", "cgroup-v1");
    }
}
