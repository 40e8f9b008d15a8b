// rsmap device-policy: the policy a grant gets, as systemd and cgroup v1 lines.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.cli.MainTest.COMPLEXES;
import static rsmap.cli.MainTest.run;

import org.junit.jupiter.api.Test;

class DevicePolicyCommandTest {
    static final String HOST = "gpu=2(g0[devices=/dev/null:r;/dev/rsmap-none:rw] g1[devices=/dev/zero:w]),nic=1(ib0)";

    @Test
    void devicePolicy_closed_printsBothFormsAndTheMissingPaths() {
        MainTest.Run r = run("device-policy", "--complexes", COMPLEXES, "--host-values", HOST, "--map", "gpu",
                "--grant", "g0,g1");
        assertThat(r.code()).isZero();
        assertThat(r.out()).isEqualTo(String.join("\n",
                "# systemd (unit properties)",
                "DevicePolicy=closed",
                "DeviceAllow=/dev/null rw",
                "DeviceAllow=/dev/zero rw",
                "DeviceAllow=/dev/full rw",
                "DeviceAllow=/dev/random rw",
                "DeviceAllow=/dev/urandom rw",
                "# cgroup v1 (files of the job's devices cgroup)",
                "devices.deny a",
                "devices.allow c 1:3 rw",
                "devices.allow c 1:5 rw",
                "devices.allow c 1:7 rw",
                "devices.allow c 1:8 rw",
                "devices.allow c 1:9 rw",
                "# missing on this host, left out (never widened)",
                "# /dev/rsmap-none", ""));
    }

    @Test
    void devicePolicy_noDevicesOnTheHost_isOpen() {
        MainTest.Run r = run("device-policy", "--complexes", COMPLEXES, "--host-values", "nic=1(ib0)", "--map", "nic",
                "--grant", "ib0");
        assertThat(r.out()).isEqualTo("# no instance carries devices: the job is not restricted\n");
    }

    @Test
    void devicePolicy_aGrantWithoutDevices_onAHostThatListsDevices_isClosedToTheBasics() {
        // where maps list devices, every job runs under a closed policy.
        MainTest.Run r = run("device-policy", "--complexes", COMPLEXES, "--host-values", HOST, "--map", "nic",
                "--grant", "ib0");
        assertThat(r.out()).startsWith(String.join("\n", "# systemd (unit properties)", "DevicePolicy=closed",
                "DeviceAllow=/dev/null rw", "DeviceAllow=/dev/zero rw", "DeviceAllow=/dev/full rw",
                "DeviceAllow=/dev/random rw", "DeviceAllow=/dev/urandom rw", "# cgroup v1"));
    }

    @Test
    void devicePolicy_badInput_isOneErrorLine() {
        assertThat(run("device-policy", "--complexes", COMPLEXES, "--host-values", HOST, "--grant", "g0").err())
                .isEqualTo("error: --map: the host has 2 resource maps; say which one the ids belong to\n");
        assertThat(run("device-policy", "--complexes", COMPLEXES, "--host-values", HOST, "--map", "gpu", "--grant", "g9")
                .err()).isEqualTo("error: --grant: resource map gpu has no instance 'g9'\n");
        MainTest.Run bad = run("device-policy", "--complexes", COMPLEXES, "--host-values", "gpu=1(g[devices=dev])",
                "--grant", "g");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).isEqualTo("error: --host-values: column 17: device path 'dev' is not absolute "
                + "(characteristic 'devices')\n");
    }
}
