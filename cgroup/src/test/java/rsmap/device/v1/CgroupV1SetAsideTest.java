// A restarted rsmapd finds the cgroups its earlier run set aside (docs/isolation.md, "Processes left at job
// end"): only directories named <job>.ended-<n>, never a job's own cgroup, a file or a link.
package rsmap.device.v1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.device.DevicePolicyException;

class CgroupV1SetAsideTest {
    @TempDir
    Path root;

    @Test
    void onlyDirectoriesNamedAsSetAside_areListed() throws Exception {
        Path base = Files.createDirectories(root.resolve("rsmap"));
        for (String d : new String[] {"7.ended-1", "8.1.ended-12", "ab_c-d.ended-999", "7", "7.1", "9.ended-0",
            "9.ended-01", "9.ended-1000", ".ended-1", "9.ended-", "9.ended-x", "9.ended-1.tmp"}) {
            Files.createDirectory(base.resolve(d));
        }
        Files.writeString(base.resolve("10.ended-1"), ""); // a file: no cgroup
        Files.createSymbolicLink(base.resolve("11.ended-1"), base.resolve("7")); // a link: never followed
        assertThat(new CgroupV1Backend(root).setAsideNames())
                .containsExactlyInAnyOrder("7.ended-1", "8.1.ended-12", "ab_c-d.ended-999");
    }

    @Test
    void noBaseYet_listsNone() throws Exception {
        assertThat(new CgroupV1Backend(root).setAsideNames()).isEmpty();
    }

    @Test
    void anUnreadableBase_isAnError_notNone() throws Exception {
        Files.writeString(root.resolve("rsmap"), "not a directory");
        assertThatThrownBy(() -> new CgroupV1Backend(root).setAsideNames()).isInstanceOf(DevicePolicyException.class)
                .hasMessageContaining("cannot list the device cgroups in " + root.resolve("rsmap"));
    }
}
