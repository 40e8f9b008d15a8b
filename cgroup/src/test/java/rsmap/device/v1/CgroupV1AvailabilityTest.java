// the cgroup v1 backend proves its root is a mounted hierarchy of the devices controller,
// read from crafted mount tables (proc(5) mountinfo), so a tmpfs with look-alike files never passes.
package rsmap.device.v1;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.device.DeviceBackend.Availability;

class CgroupV1AvailabilityTest {
    @TempDir
    Path tmp;
    /** {@code <tmp>/cgroup}: where the rows mount things, like /sys/fs/cgroup. */
    Path cg;
    /** The backend's root, {@code <tmp>/cgroup/devices}, holding the files a devices hierarchy has. */
    Path devices;

    @BeforeEach
    void files() throws Exception {
        cg = tmp.toRealPath().resolve("cgroup");
        devices = Files.createDirectories(cg.resolve("devices"));
        for (String f : List.of("devices.allow", "devices.deny", "devices.list", "cgroup.procs")) {
            Files.writeString(devices.resolve(f), "");
        }
    }

    /** One mountinfo line (proc(5)): id, parent, mount point, type, super options. */
    static String line(int id, int parent, Path point, String type, String superOptions) {
        return id + " " + parent + " 0:" + (20 + id) + " / " + point.toString().replace(" ", "\\040")
                + " rw,relatime shared:" + id + " - " + type + " " + type + " " + superOptions;
    }

    /** The host's root and a tmpfs at {@code <tmp>/cgroup}, then the row's lines. */
    Availability with(Path root, String... lines) throws Exception {
        List<String> all = new ArrayList<>(List.of(line(1, 0, Path.of("/"), "ext4", "rw"), line(2, 1, cg, "tmpfs", "rw,mode=755")));
        all.addAll(List.of(lines));
        Path mountinfo = Files.writeString(tmp.resolve("mountinfo"), String.join("\n", all) + "\n");
        return new CgroupV1Backend(root, mountinfo).availability();
    }

    Availability with(String... lines) throws Exception {
        return with(devices, lines);
    }

    @Test
    void availability_devicesHierarchyMountedAtTheRoot_available() throws Exception {
        Availability a = with(line(3, 2, devices, "cgroup", "rw,devices"));
        assertThat(a.available()).as(a.reason()).isTrue();
    }

    @Test
    void availability_devicesBoundWithOtherControllers_available() throws Exception {
        Availability a = with(line(3, 2, devices, "cgroup", "rw,cpu,cpuacct,devices"));
        assertThat(a.available()).as(a.reason()).isTrue();
    }

    @Test
    void availability_rootInsideTheDevicesHierarchy_available() throws Exception {
        // an admin may point rsmapd at a sub-cgroup of the hierarchy (root = .../devices/batch)
        Path sub = Files.createDirectories(devices.resolve("batch"));
        Files.writeString(sub.resolve("cgroup.procs"), "");
        Availability a = with(sub, line(3, 2, devices, "cgroup", "rw,devices"));
        assertThat(a.available()).as(a.reason()).isTrue();
    }

    @Test
    void availability_escapedMountPoint_available() throws Exception {
        Path spaced = Files.createDirectories(cg.resolve("dev ices"));
        Files.writeString(spaced.resolve("cgroup.procs"), "");
        Availability a = with(spaced, line(3, 2, spaced, "cgroup", "rw,devices"));
        assertThat(a.available()).as(a.reason()).isTrue();
    }

    @Test
    void availability_tmpfsMountedOverTheDevicesHierarchy_unavailable() throws Exception {
        // the hole: a tmpfs stacked on the devices mount, with devices.allow files of its own
        Availability a = with(line(3, 2, devices, "cgroup", "rw,devices"), line(4, 3, devices, "tmpfs", "rw"));
        assertThat(a.available()).isFalse();
        assertThat(a.reason()).contains(devices.toString()).contains("tmpfs mount").contains("enforce nothing");
    }

    @Test
    void availability_plainDirectoryOnTmpfs_unavailable() throws Exception {
        // devices.allow and cgroup.procs exist, but nothing is mounted on the root: it is the tmpfs's
        Availability a = with();
        assertThat(a.available()).isFalse();
        assertThat(a.reason()).contains(devices + " (on " + cg + ") is a tmpfs mount");
    }

    @Test
    void availability_devicesControllerMountedElsewhere_unavailable() throws Exception {
        Availability a = with(line(3, 2, cg.resolve("elsewhere"), "cgroup", "rw,devices"));
        assertThat(a.available()).isFalse();
        assertThat(a.reason()).contains("tmpfs mount");
    }

    @Test
    void availability_cgroupV2Only_unavailableNamingSystemd() throws Exception {
        Availability a = with(line(3, 2, devices, "cgroup2", "rw,nsdelegate"));
        assertThat(a.available()).isFalse();
        assertThat(a.reason()).contains("cgroup v2").contains("device_backend = systemd");
    }

    @Test
    void availability_nameSystemdHierarchy_unavailable() throws Exception {
        Availability a = with(line(3, 2, devices, "cgroup", "rw,xattr,name=systemd"));
        assertThat(a.available()).isFalse();
        assertThat(a.reason()).contains("without the devices controller").contains("name=systemd");
    }

    @Test
    void availability_devicesNamedHierarchyIsNotTheController_unavailable() throws Exception {
        // name=devices is a named hierarchy with no controller, not the devices controller
        Availability a = with(line(3, 2, devices, "cgroup", "rw,name=devices"));
        assertThat(a.available()).isFalse();
    }

    @Test
    void availability_parentOvermountedAfterTheDevicesMount_unavailable() throws Exception {
        // a second tmpfs on <tmp>/cgroup hides the devices mount below the first one: the kernel resolves the
        // root to the new tmpfs, though the hidden devices mount is still listed
        Availability a = with(line(3, 2, devices, "cgroup", "rw,devices"), line(4, 2, cg, "tmpfs", "rw"));
        assertThat(a.available()).isFalse();
        assertThat(a.reason()).contains("tmpfs mount");
    }

    @Test
    void availability_tmpfsInsideTheHierarchyAboveTheRoot_unavailable() throws Exception {
        Path sub = Files.createDirectories(devices.resolve("batch"));
        Files.writeString(sub.resolve("cgroup.procs"), "");
        Availability a = with(sub, line(3, 2, devices, "cgroup", "rw,devices"), line(4, 3, sub, "tmpfs", "rw"));
        assertThat(a.available()).isFalse();
        assertThat(a.reason()).contains(sub + " is a tmpfs mount");
    }

    @Test
    void availability_devicesMountUnderAHiddenParent_neverReached() throws Exception {
        // a devices mount whose parent is not on the path from / (another namespace's leftovers)
        Availability a = with(line(3, 99, devices, "cgroup", "rw,devices"));
        assertThat(a.available()).isFalse();
    }

    @Test
    void availability_noCgroupProcs_unavailable() throws Exception {
        Files.delete(devices.resolve("cgroup.procs"));
        Availability a = with(line(3, 2, devices, "cgroup", "rw,devices"));
        assertThat(a.available()).isFalse();
        assertThat(a.reason()).contains("cgroup.procs is not writable");
    }

    @Test
    void availability_rootMissing_unavailable() throws Exception {
        Availability a = with(cg.resolve("nowhere"), line(3, 2, devices, "cgroup", "rw,devices"));
        assertThat(a.available()).isFalse();
        assertThat(a.reason()).contains("does not exist");
    }

    @Test
    void availability_noMountTable_unavailable() {
        Availability a = new CgroupV1Backend(devices, tmp.resolve("no-mountinfo")).availability();
        assertThat(a.available()).isFalse();
        assertThat(a.reason()).contains("cannot read the mount table");
    }

    @Test
    void parse_garbageLines_skipped() {
        Mounts m = Mounts.parse("garbage\n\n1 0 8:1 / / rw - ext4 /dev/sda1 rw\nx y z - a b c\n");
        assertThat(m.of(Path.of("/a/b"))).get().extracting(Mounts.Mount::type).isEqualTo("ext4");
    }
}
