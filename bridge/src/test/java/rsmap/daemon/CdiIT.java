// docs/containers.md with a real podman: a job through execd-stub and the real hooks on cgroup v1, granted
// one of two fake cards (mknod c 195 0 and 1), starts a container with --device "$RSMAP_CDI_DEVICE": its card's
// node is there with the right major:minor, the other card's is not, SGE_HGR_gpu is set; after a realloc
// that adds the second card a new container sees both; after the epilog podman refuses the device name.
// With cdi = required, a spec that cannot be written makes the prolog reschedule the job.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import rsmap.cdi.CdiSchema;
import rsmap.daemon.config.Config;

@Timeout(300)
class CdiIT {
    ExecdCell cell;
    Path shared;
    Path container;
    Path[] cards = new Path[2];

    /** What is missing here for this test, or null: root, cgroup v1 devices, podman, runc, a static busybox. */
    static String missing() throws Exception {
        if (!ExecdCell.sh("id -u").strip().equals("0")) {
            return "root (podman as root, the hooks as execd runs them)";
        }
        if (!Files.isRegularFile(Path.of("/sys/fs/cgroup/devices/devices.allow"))) {
            return "a cgroup v1 devices controller at /sys/fs/cgroup/devices";
        }
        for (String tool : List.of("podman", "runc", "unshare")) {
            if (ExecdCell.sh("command -v " + tool).isBlank()) {
                return tool + " (apt-get install podman runc)";
            }
        }
        if (!Files.isExecutable(Path.of("/bin/busybox")) || ExecdCell.sh("file -L /bin/busybox 2>/dev/null || ldd "
                + "/bin/busybox 2>&1").contains("dynamically linked")) {
            return "a static /bin/busybox (apt-get install busybox-static)";
        }
        return null;
    }

    @BeforeEach
    void setUp() throws Exception {
        String missing = missing();
        if (missing != null) {
            if ("true".equals(System.getenv("CI"))) {
                fail("missing: " + missing);
            }
            Assumptions.abort("missing: " + missing);
        }
        CdiSchema.assumePresent();
        // sticky, as /tmp: a state directory below it is trusted; the jobs run as root, podman's user here
        cell = ExecdCell.sticky("rsmap-cdi").withShell().as("root");
        shared = cell.dir();
        cell.gpus(2);
        for (int i = 0; i < 2; i++) {
            cards[i] = shared.resolve("dev/nvidia" + i);
        }
        // The container's root: a static busybox, no image pulled.
        Path root = shared.resolve("rootfs");
        for (String d : List.of("bin", "proc", "sys", "dev", "etc", "tmp")) {
            Files.createDirectories(root.resolve(d));
        }
        Files.copy(Path.of("/bin/busybox"), root.resolve("bin/busybox"));
        for (String tool : List.of("sh", "ls", "echo")) {
            Files.createSymbolicLink(root.resolve("bin").resolve(tool), Path.of("busybox"));
        }
        // podman 4.3 reads CDI specs from /etc/cdi and /var/run/cdi only, with no setting for another folder:
        // the test's cdi_dir is bound over /var/run/cdi in a mount namespace of the container's own, so
        // that the host's /var/run/cdi is neither read nor written.
        Files.createDirectories(Path.of("/run/cdi"));
        container = Files.writeString(shared.resolve("container"), "#!/bin/sh\n"
                + "exec unshare -m sh -c 'mount --bind " + shared.resolve("cdi") + " /run/cdi && exec podman run "
                + "--runtime runc --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 "
                + "--device \"$0\" --rootfs " + root + " /bin/sh -c \"ls -ln " + shared.resolve("dev")
                + " 2>&1; echo hgr=\\$SGE_HGR_gpu\"' \"$1\" 2>&1 | grep -v 'level=warning'\n");
        Files.setPosixFilePermissions(container, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (cell != null) {
            cell.close();
        }
    }

    private static String card(int minor) {
        return "crw-rw-rw-\\s+1 0\\s+0\\s+195,\\s+" + minor + " .* nvidia" + minor;
    }

    @Test
    void aContainerGetsExactlyTheJobsCards_aGrowAddsTheOther_andAfterTheEpilogTheNameIsRefused() throws Exception {
        Config config = TestDaemon.config(shared.resolve("d"), "gpu=2(gpu0[devices=" + cards[0] + ":rw] gpu1[devices="
                + cards[1] + ":rw])", "device_backend = cgroup-v1", "socket_mode = 0666", "reconcile_interval = 0",
                "cdi_dir = " + shared.resolve("cdi"));
        String id = ProcessHandle.current().pid() + "1";
        try (Daemon daemon = TestDaemon.start(config)) {
            Process job = cell.job(config, id, "gpu=1", "echo \"dev=$RSMAP_CDI_DEVICE\"; echo first:; container "
                    + "\"$RSMAP_CDI_DEVICE\"; cp " + shared.resolve("cdi") + "/rsmapd-job-" + id + ".json "
                    + shared.resolve("first.json") + "; rsmap-shell realloc --add gpu=1 --tag grow >/dev/null; "
                    + "echo \"grow=$?\"; cp " + shared.resolve("cdi") + "/rsmapd-job-" + id + ".json "
                    + shared.resolve("grown.json") + "; echo second:; container \"$RSMAP_CDI_DEVICE\"",
                    "RSMAP_CDI_DEVICE=rsmap.io/job=someone-elses"); // dropped by the starter
            String out = ExecdCell.finish(job, 240);
            int second = out.indexOf("second:");
            assertThat(second).as(out).isPositive();
            String first = out.substring(0, second);
            String grown = out.substring(second);
            assertThat(out).contains("dev=rsmap.io/job=" + id + "\n").contains("grow=0\n").endsWith("exit=0");
            assertThat(first).as("its card, not the other").containsPattern(card(0)).doesNotContainPattern(card(1))
                    .contains("hgr=gpu0\n");
            assertThat(grown).as("a new container after the grow").containsPattern(card(0)).containsPattern(card(1))
                    .contains("hgr=gpu0 gpu1\n");
            CdiSchema.assertValid(List.of(shared.resolve("first.json"), shared.resolve("grown.json")));
            assertThat(daemon.cluster().runningJobs()).isEmpty();
            assertThat(shared.resolve("cdi/rsmapd-job-" + id + ".json")).as("removed at JOB_END").doesNotExist();
            String after = ExecdCell.sh(container + " rsmap.io/job=" + id);
            assertThat(after).contains("unresolvable CDI devices rsmap.io/job=" + id);
        }
    }

    @Test
    void cdiRequired_aSpecThatCannotBeWritten_theProlog_reschedulesTheJob_namingCdiDir() throws Exception {
        Files.writeString(shared.resolve("not-a-dir"), "");
        Config config = TestDaemon.config(shared.resolve("r"), "gpu=1(gpu0[devices=" + cards[0] + ":rw])",
                "reconcile_interval = 0", "cdi = required", "cdi_dir = " + shared.resolve("not-a-dir"));
        try (Daemon daemon = TestDaemon.start(config)) {
            ProcessBuilder pb = new ProcessBuilder(ExecdCell.HOOK.toString(), "prolog");
            pb.environment().clear();
            pb.environment().putAll(java.util.Map.of("RSMAP_SOCKET", config.socket().toString(), "JOB_ID", "31",
                    "SGE_TASK_ID", "undefined", "NSLOTS", "1", "USER", "root", "RSMAP_REQUEST", "gpu=1"));
            Process h = pb.redirectErrorStream(true).start();
            String out = new String(h.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(h.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(h.exitValue()).as(out).isEqualTo(99); // execd reschedules the job elsewhere
            assertThat(out).contains("job 31: cannot write its CDI spec").contains("cdi_dir " + shared.resolve("not-a-dir"))
                    .contains("cdi = required");
            assertThat(daemon.cluster().runningJobs()).isEmpty();
        }
    }
}
