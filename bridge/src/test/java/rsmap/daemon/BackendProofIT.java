// on the real path: a real rsmapd process whose named cgroup-v1 backend sits on a tmpfs
// mounted over /sys/fs/cgroup/devices (look-alike devices.allow, devices.deny and cgroup.procs files, in a
// private mount namespace) refuses to start under isolation = required and warns under optional.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

@Timeout(180)
class BackendProofIT {
    static final Path RSMAPD = RsmapdIT.RSMAPD;
    static final Path DEVICES = Path.of("/sys/fs/cgroup/devices");
    static final Duration GUARD = Duration.ofSeconds(60);
    /**
     * Mounts a tmpfs over the devices hierarchy in the new mount namespace (private propagation: the host
     * never sees it), fills it with the files a devices hierarchy has, then becomes rsmapd.
     */
    static final String OVER_TMPFS = "mount -t tmpfs -o mode=755 rsmap-fake-devices \"$1\" && "
            + "for f in devices.allow devices.deny devices.list cgroup.procs; do : > \"$1/$f\"; done && "
            + "exec \"$2\" --config \"$3\"";

    @TempDir
    Path tmp;

    /** Root, unshare and the devices hierarchy's directory are needed; under CI=true their absence fails. */
    @BeforeEach
    void prerequisites() throws Exception {
        String why = null;
        if (!"root".equals(System.getProperty("user.name"))) {
            why = "mounting a tmpfs in a new mount namespace needs root";
        } else if (Stream.of(System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":"))
                .noneMatch(d -> Files.isExecutable(Path.of(d, "unshare")))) {
            why = "no unshare on PATH (util-linux)";
        } else if (!Files.isDirectory(DEVICES)) {
            why = "no directory " + DEVICES + " to mount a tmpfs over";
        } else if (!Files.isRegularFile(RSMAPD)) {
            why = "no " + RSMAPD;
        }
        if (why != null) {
            if ("true".equals(System.getenv("CI"))) {
                fail(why);
            }
            Assumptions.abort(why);
        }
    }

    /** rsmapd with {@code device_backend = cgroup-v1} and {@code isolation}, over the tmpfs. */
    private Process start(String isolation, NotifyListener notify) throws Exception {
        TestDaemon.config(tmp, "gpu=2(0 1)", "device_backend = cgroup-v1", "isolation = " + isolation);
        ProcessBuilder pb = new ProcessBuilder("unshare", "-m", "--propagation", "private", "sh", "-c", OVER_TMPFS, "sh",
                DEVICES.toString(), RSMAPD.toString(), tmp.resolve("rsmapd.conf").toString())
                .redirectOutput(tmp.resolve("out").toFile()).redirectError(tmp.resolve("err").toFile());
        pb.environment().put("NOTIFY_SOCKET", notify.address());
        return pb.start();
    }

    private List<String> stderr() throws Exception {
        return Files.readAllLines(tmp.resolve("err"));
    }

    @Test
    void rsmapd_cgroupV1OnTmpfs_isolationRequired_exits2WithOneLineWhy() throws Exception {
        try (NotifyListener notify = NotifyListener.bind(tmp.resolve("notify").toString())) {
            Process p = start("required", notify);
            try {
                long deadline = System.nanoTime() + GUARD.toNanos();
                while (p.isAlive() && System.nanoTime() < deadline) {
                    assertThat(notify.receive(Duration.ofMillis(100))).as("rsmapd started on a tmpfs, where it enforces"
                            + " nothing (stderr: %s)", stderr()).isEmpty();
                }
                assertThat(p.waitFor(1, TimeUnit.SECONDS)).as("rsmapd still runs (stderr: %s)", stderr()).isTrue();
                assertThat(p.exitValue()).as("stderr: %s", stderr()).isEqualTo(2);
                assertThat(stderr()).singleElement().asString()
                        .startsWith("error: " + tmp.resolve("rsmapd.conf") + ": line ")
                        .contains(": device_backend: cgroup-v1 cannot enforce device isolation here: ")
                        .contains(DEVICES + " is a tmpfs mount");
                assertThat(tmp.resolve("rsmapd.sock")).doesNotExist();
            } finally {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void rsmapd_cgroupV1OnTmpfs_isolationOptional_startsAndWarns() throws Exception {
        try (NotifyListener notify = NotifyListener.bind(tmp.resolve("notify").toString())) {
            Process p = start("optional", notify);
            try {
                assertThat(notify.receive(GUARD)).as("stderr: %s", stderr()).contains("READY=1");
                try (TestClient c = new TestClient(tmp.resolve("rsmapd.sock"))) {
                    assertThat(c.call(Frame.of(1, Code.INIT.value(), Session.VERSION))).containsExactly(Session.ok(1));
                }
                assertThat(stderr()).anySatisfy(l -> assertThat(l)
                        .startsWith("rsmapd: warning: device isolation is NOT enforced (isolation=optional): ")
                        .contains("cgroup-v1 cannot enforce device isolation here: ")
                        .contains(DEVICES + " is a tmpfs mount"));
                p.destroy(); // SIGTERM: rsmapd is the process unshare and sh exec'd into
                assertThat(p.waitFor(GUARD.toSeconds(), TimeUnit.SECONDS)).isTrue();
            } finally {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
