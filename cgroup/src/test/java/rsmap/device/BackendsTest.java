// Backend selection: explicit names, and auto-detection of systemd and cgroup v1.
package rsmap.device;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.device.systemd.SystemdBackend;
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
        public void update(String job, DevicePolicy policy) {
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

    private DeviceBackend named(String name, boolean systemdOk, boolean v1Ok) throws Exception {
        return Backends.choose(name, () -> new Stub("systemd", systemdOk), () -> new Stub("cgroup-v1", v1Ok),
                tmp.resolve("no-comm"));
    }

    @Test
    void choose_byName() throws Exception {
        assertThat(Backends.choose("dry-run")).isInstanceOf(DryRunBackend.class);
        assertThat(named("cgroup-v1", false, true).name()).isEqualTo("cgroup-v1");
        assertThat(named("systemd", true, false).name()).isEqualTo("systemd");
        assertThatThrownBy(() -> Backends.choose("selinux")).hasMessageContaining("unknown device backend 'selinux'");
    }

    @Test
    void choose_namedBackendThatCannotEnforce_isAnErrorWithItsReason() {
        // device_backend = cgroup-v1 on plain files started and enforced nothing
        assertThatThrownBy(() -> named("cgroup-v1", true, false)).isInstanceOf(DevicePolicyException.class)
                .hasMessage("cgroup-v1 cannot enforce device isolation here: cgroup-v1 unreachable");
        assertThatThrownBy(() -> named("systemd", false, true)).isInstanceOf(DevicePolicyException.class)
                .hasMessage("systemd cannot enforce device isolation here: systemd unreachable");
    }

    @Test
    void choose_dryRun_needsNoProof() throws Exception {
        // the admin's explicit choice not to enforce; the daemon logs it
        assertThat(named("dry-run", false, false)).isInstanceOf(DryRunBackend.class);
    }

    @Test
    void choose_cgroupV1OnThisMachine_isTheRealHierarchy() throws Exception {
        FakeDevices.requireRoot("the cgroup v1 devices controller");
        assertThat(Backends.choose("cgroup-v1")).isInstanceOf(CgroupV1Backend.class);
    }

    @Test
    void choose_systemdWithoutAManager_isAnError() {
        // no system bus here (PID 1 is not systemd) or one without systemd: the reason names the address
        try (SystemdBackend probe = SystemdBackend.systemBus()) {
            Assumptions.assumeFalse(probe.availability().available(), "systemd answers on this machine's system bus");
        }
        assertThatThrownBy(() -> Backends.choose("systemd")).isInstanceOf(DevicePolicyException.class)
                .hasMessageContaining("systemd cannot enforce device isolation here")
                .hasMessageContaining(SystemdBackend.SYSTEM_BUS);
    }

    @Test
    void auto_onThisMachine_findsTheV1Controller() throws Exception {
        FakeDevices.requireRoot("the cgroup v1 devices controller");
        assertThat(Backends.choose("auto").name()).isIn("systemd", "cgroup-v1");
    }
}
