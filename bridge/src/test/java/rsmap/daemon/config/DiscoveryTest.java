// Discovery of a host's attributes from fake /proc, /sys and /etc files: each attribute, each failure.
package rsmap.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.Trees;

class DiscoveryTest {
    @TempDir
    Path root;

    /** A whole machine's files, as a 2-socket x86_64 Ubuntu host has them. */
    private void machine() throws Exception {
        write("proc/sys/kernel/arch", "x86_64\n");
        write("proc/sys/kernel/osrelease", "6.5.0-14-generic\n");
        write("proc/sys/kernel/ostype", "Linux\n");
        write("etc/os-release", "NAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\nID_LIKE=debian\n");
        write("sys/devices/system/cpu/online", "0-31,64-95\n");
        write("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "2400000\n");
        write("proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 1200.000\nprocessor\t: 1\ncpu MHz\t\t: 3100.412\n");
        write("proc/meminfo", "MemTotal:       65862876 kB\nMemFree:        1234 kB\n");
    }

    private void write(String rel, String text) throws Exception {
        Path p = root.resolve(rel);
        Files.createDirectories(p.getParent());
        Files.writeString(p, text);
    }

    private Discovery.Result discover() {
        return new Discovery(root, Optional.empty(), OptionalInt.empty()).discover();
    }

    @Test
    void discover_aWholeMachine_readsEveryAttributeFromItsSource() throws Exception {
        machine();
        Discovery.Result r = discover();
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("arch", "x86_64");              // /proc/sys/kernel/arch
        expected.put("kernel", "6.5.0-14-generic");  // /proc/sys/kernel/osrelease
        expected.put("os", "ubuntu");                // ID= of /etc/os-release
        expected.put("cpus", "64");                  // /sys/devices/system/cpu/online: 0-31,64-95
        expected.put("cpu_speed", "2400MHz");        // cpuinfo_max_freq in kHz, before /proc/cpuinfo
        expected.put("memory", "64319M");            // MemTotal 65862876 kB in whole MiB
        assertThat(r.attributes()).containsExactlyEntriesOf(expected);
        assertThat(r.problems()).isEmpty();
    }

    /** One row per source that can fail: the attribute it leaves out, or the fallback it takes, and why. */
    @Test
    void discover_eachFailure_leavesItsAttributeOut_orFallsBack_andSaysWhy() throws Exception {
        record Row(String file, String content, String attribute, String value, String problem) {
        }
        List<Row> rows = List.of(
                new Row("proc/sys/kernel/arch", null, "arch", null, "arch not discovered: " + root
                        + "/proc/sys/kernel/arch: no such file"),
                new Row("proc/sys/kernel/osrelease", null, "kernel", null, "/proc/sys/kernel/osrelease: no such file"),
                new Row("proc/sys/kernel/osrelease", "\n", "kernel", null, "/proc/sys/kernel/osrelease: empty"),
                new Row("etc/os-release", "NAME=x\n", "os", "linux", null),      // no ID=: the kernel's ostype
                new Row("etc/os-release", "ID=\"rhel\"\n", "os", "rhel", null),  // quotes go
                new Row("sys/devices/system/cpu/online", "0-3,x\n", "cpus", null, "not a CPU list: '0-3,x'"),
                new Row("sys/devices/system/cpu/online", "0\n", "cpus", "1", null),
                new Row("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", null, "cpu_speed", "3100MHz", null),
                new Row("proc/meminfo", "MemFree: 1 kB\n", "memory", null, "/proc/meminfo: no MemTotal line"),
                new Row("proc/meminfo", "MemTotal: 12 MB\n", "memory", null, "MemTotal is not 'N kB'"));
        for (Row row : rows) {
            Trees.delete(root); // each row on a machine of its own: machine() makes it again
            machine();
            if (row.content == null) {
                Files.delete(root.resolve(row.file));
            } else {
                write(row.file, row.content);
            }
            Discovery.Result r = discover();
            assertThat(r.attributes().get(row.attribute)).as(row.toString()).isEqualTo(row.value);
            if (row.problem == null) {
                assertThat(r.problems()).as(row.toString()).isEmpty();
            } else {
                assertThat(r.problems()).as(row.toString()).singleElement(org.assertj.core.api.InstanceOfAssertFactories
                        .STRING).startsWith("attribute " + row.attribute + " not discovered: ").contains(row.problem);
            }
            assertThat(r.attributes()).as("the others are still read").hasSize(row.value == null ? 5 : 6);
        }
    }

    @Test
    void discover_noCpufreqAndNoCpuMHz_leavesCpuSpeedOut() throws Exception {
        machine();
        Files.delete(root.resolve("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"));
        write("proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 50.00\n"); // an arm64 host's cpuinfo
        Discovery.Result r = discover();
        assertThat(r.attributes()).doesNotContainKey("cpu_speed");
        assertThat(r.problems()).singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
                .contains("no \"cpu MHz\" line");
    }

    @Test
    void discover_nothingThere_fallsBackToTheJvm_forArchAndCpus_andLeavesTheRestOut() {
        Discovery.Result r = new Discovery(root, Optional.of("amd64"), OptionalInt.of(8)).discover();
        assertThat(r.attributes()).containsExactly(Map.entry("arch", "x86_64"), Map.entry("cpus", "8"));
        assertThat(r.problems()).hasSize(4).allMatch(p -> p.startsWith("attribute ") && !p.contains("\n"));
        assertThat(new Discovery(root, Optional.of("aarch64"), OptionalInt.empty()).discover().attributes())
                .containsExactly(Map.entry("arch", "aarch64"));
    }

    @Test
    void discover_thisMachine_neverThrows_andEveryValueReadsUnderItsType() throws Exception {
        Discovery.Result r = Discovery.system().discover();
        rsmap.node.NodeAttributes.parse(r.attributes(), Discovery.types()); // a version kernel, numbers with units
        assertThat(r.attributes()).containsKeys("arch", "cpus");
    }
}
