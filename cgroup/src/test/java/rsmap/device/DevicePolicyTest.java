// The closed device policy of Grid Engine's RSMAP manual "DEVICE ISOLATION", computed from the devices characteristic.
package rsmap.device;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import rsmap.map.DeviceList;
import rsmap.map.Instance;

class DevicePolicyTest {
    Path dir;
    Path gpu0;
    Path gpu1;
    Path ctl;

    @BeforeEach
    void nodes() throws Exception {
        FakeDevices.requireRoot("mknod of fake GPU nodes");
        dir = FakeDevices.tempDir();
        gpu0 = FakeDevices.node(dir, "nvidia0", 195, 0);
        gpu1 = FakeDevices.node(dir, "nvidia1", 195, 1);
        ctl = FakeDevices.node(dir, "nvidiactl", 195, 255);
    }

    @AfterEach
    void clean() throws Exception {
        if (dir != null) {
            try (var s = Files.list(dir)) {
                for (Path p : s.toList()) {
                    Files.delete(p);
                }
            }
            Files.delete(dir);
        }
    }

    private List<Instance> host() throws Exception {
        return FakeDevices.instances("gpu=3(g0[devices=" + gpu0 + ":rw;" + ctl + ":r] g1[devices=" + gpu1 + ":rw;"
                + ctl + ":w] g2[memory=1G])");
    }

    @Test
    void of_instanceWithoutDevices_isOpen() throws Exception {
        // "A job that does not request the resource map is not restricted by it."
        assertThat(DevicePolicy.of(List.of()).isOpen()).isTrue();
        assertThat(DevicePolicy.of(List.of(host().get(2))).isOpen()).isTrue();
        assertThat(DevicePolicy.of(List.of()).cgroupV1Lines()).isEmpty();
    }

    @Test
    void of_grantedGpu_allowsItsDevicesAndTheBasicsOnly() throws Exception {
        // "A job granted gpu0 may read and write /dev/nvidia0 and read /dev/nvidiactl, and cannot reach
        // /dev/nvidia1 at all." + "/dev/null, /dev/zero, /dev/full, /dev/random and /dev/urandom"
        DevicePolicy p = DevicePolicy.of(List.of(host().get(0)));
        assertThat(p.closed()).isTrue();
        assertThat(p.cgroupV1Lines()).containsExactly("devices.deny a", "devices.allow c 195:0 rw",
                "devices.allow c 195:255 r", "devices.allow c 1:3 rw", "devices.allow c 1:5 rw",
                "devices.allow c 1:7 rw", "devices.allow c 1:8 rw", "devices.allow c 1:9 rw");
        assertThat(p.systemdLines()).containsExactly("DevicePolicy=closed", "DeviceAllow=" + gpu0 + " rw",
                "DeviceAllow=" + ctl + " r", "DeviceAllow=/dev/null rw", "DeviceAllow=/dev/zero rw",
                "DeviceAllow=/dev/full rw", "DeviceAllow=/dev/random rw", "DeviceAllow=/dev/urandom rw");
        assertThat(p.missing()).isEmpty();
    }

    @Test
    void of_pathOnTwoInstances_getsTheWidestMode() throws Exception {
        // "Where one path appears on more than one granted instance, the widest of the modes applies."
        DevicePolicy p = DevicePolicy.of(host().subList(0, 2));
        assertThat(p.rules()).filteredOn(r -> r.path().equals(ctl.toString())).singleElement()
                .extracting(DeviceRule::mode).isEqualTo(DeviceList.Mode.RW);
    }

    @Test
    void of_pathWithoutMode_isReadOnly() throws Exception {
        // "A path written without a mode is granted read access."
        DevicePolicy p = DevicePolicy.of(FakeDevices.instances("gpu=1(g[devices=" + gpu0 + "])"));
        assertThat(p.rules().get(0).cgroupV1()).isEqualTo("c 195:0 r");
    }

    @Test
    void of_missingPath_isReportedAndLeftOut_neverWidened() throws Exception {
        DevicePolicy p = DevicePolicy.of(FakeDevices.instances("gpu=1(g[devices=" + dir.resolve("gone") + ":rw;" + gpu0
                + ":rw])"));
        assertThat(p.missing()).containsExactly(dir.resolve("gone").toString());
        assertThat(p.cgroupV1Lines()).noneMatch(l -> l.contains("*")).contains("devices.allow c 195:0 rw");
    }

    @Test
    void of_symlink_isResolvedToItsDevice() throws Exception {
        Path link = Files.createSymbolicLink(dir.resolve("gpu-by-name"), gpu1);
        DevicePolicy p = DevicePolicy.of(FakeDevices.instances("gpu=1(g[devices=" + link + ":rw])"));
        assertThat(p.rules().get(0)).isEqualTo(new DeviceRule(link.toString(), 'c', 195, 1, DeviceList.Mode.RW));
    }

    @Test
    void of_regularFile_isNoDevice() throws Exception {
        Path file = Files.writeString(dir.resolve("plain"), "x");
        assertThat(DevicePolicy.of(FakeDevices.instances("gpu=1(g[devices=" + file + "])")).missing())
                .containsExactly(file.toString());
    }

    @Test
    void majorMinor_decodeTheLinuxDevT() {
        long dev = (0x123L << 8) | 0x45L | (0xabcL << 20) | (0x678L << 44);
        assertThat(DevicePolicy.major(dev)).isEqualTo(0x678123);
        assertThat(DevicePolicy.minor(dev)).isEqualTo(0xabc45);
    }
}
