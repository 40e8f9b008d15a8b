// rsmapd trusts its state directory only as sshd's StrictModes would, and opens nothing in it through a
// link (docs/isolation.md, "The state directory"): a real rsmapd process, directories made by `nobody`.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

@Timeout(120)
class StateDirIT {
    @TempDir
    Path tmp;
    Path planted;
    Path victim;

    @BeforeEach
    void setUp() throws Exception {
        ExecdCell.jobUser(); // root, and a user nobody
        planted = Path.of("/tmp", "rsmap-trust-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        victim = Files.writeString(tmp.resolve("victim"), "precious\n");
        Files.setPosixFilePermissions(victim, PosixFilePermissions.fromString("rw-------"));
    }

    @AfterEach
    void tearDown() throws Exception {
        ExecdCell.sh("rm -rf " + planted);
    }

    private record Exit(int code, String err) {
    }

    /** bin/rsmapd's main on {@code conf}, expected to refuse to start. */
    private static Exit rsmapd(Path conf) throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "--config", conf.toString()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("rsmapd started on an untrusted state directory");
        }
        return new Exit(p.exitValue(), new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    private Path conf(Path stateDir) throws Exception {
        Config c = TestDaemon.config(tmp.resolve("c" + System.nanoTime()), "gpu=1(0)", "state_dir = " + stateDir);
        return c.complexes().resolveSibling("rsmapd.conf");
    }

    @Test
    void theToursStateDirUnderTmp_madeByNobody_isRefusedWithOneLineNamingPathAndOwner() throws Exception {
        ExecdCell.sh("setpriv --reuid nobody --regid nogroup --clear-groups mkdir -m 0755 " + planted);
        Exit e = rsmapd(conf(planted.resolve("state")));
        assertThat(e.code()).as(e.err()).isEqualTo(2);
        assertThat(e.err().lines().toList()).as(e.err()).hasSize(1);
        assertThat(e.err()).startsWith("error: state_dir: " + planted + " is owned by nobody (uid ")
                .contains("not root or the daemon user (above state_dir " + planted.resolve("state") + ")");
        assertThat(planted.resolve("state")).doesNotExist();
    }

    @Test
    void aStateDirOwnedByNobody_andAPlantedSymlinkStateDir_areRefused() throws Exception {
        ExecdCell.sh("mkdir -m 0755 " + planted + " && mkdir -m 0700 " + planted.resolve("state") + " && chown nobody "
                + planted.resolve("state"));
        Exit owned = rsmapd(conf(planted.resolve("state")));
        assertThat(owned.code()).isEqualTo(2);
        assertThat(owned.err()).as(owned.err()).startsWith("error: state_dir: " + planted.resolve("state") + " is owned by nobody");
        Files.createSymbolicLink(planted.resolve("link"), tmp);
        Exit linked = rsmapd(conf(planted.resolve("link")));
        assertThat(linked.code()).isEqualTo(2);
        assertThat(linked.err()).as(linked.err()).startsWith("error: state_dir: " + planted.resolve("link")
                + " is a symbolic link (to " + tmp + ", owned by root)");
        assertThat(tmp.resolve("lock")).doesNotExist();
    }

    @Test
    void aWorldWritableStateDir_isRefused() throws Exception {
        ExecdCell.sh("mkdir -m 0755 " + planted + " && mkdir -m 0777 " + planted.resolve("state"));
        Exit e = rsmapd(conf(planted.resolve("state")));
        assertThat(e.code()).isEqualTo(2);
        assertThat(e.err()).as(e.err()).startsWith("error: state_dir: " + planted.resolve("state")
                + " is writable by its group (mode 0777, owner root)");
    }

    @Test
    void plantedLockAndJournalLinks_areNeverWrittenThrough() throws Exception {
        Path state = Files.createDirectory(tmp.resolve("state"));
        Files.createSymbolicLink(state.resolve("lock"), victim);
        Exit lock = rsmapd(conf(state));
        assertThat(lock.code()).as(lock.err()).isEqualTo(2);
        assertThat(lock.err()).as(lock.err()).contains(state.resolve("lock").toString());
        Files.delete(state.resolve("lock"));
        Files.createSymbolicLink(state.resolve("journal"), victim);
        Exit journal = rsmapd(conf(state));
        assertThat(journal.code()).as(journal.err()).isEqualTo(2);
        assertThat(journal.err()).as(journal.err()).contains(state.resolve("journal").toString());
        assertThat(Files.readString(victim)).isEqualTo("precious\n");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(victim))).isEqualTo("rw-------");
    }

    @Test
    void theJournalIs0600_andTheEnvFileIsTheJobOwnersAlone_neverWrittenThroughAPlantedTmpLink() throws Exception {
        Config config = TestDaemon.config(tmp.resolve("c"), "gpu=1(0)", "reconcile_interval = 0");
        Path env = config.stateDir().resolve("env");
        Files.createDirectories(env);
        Files.createSymbolicLink(env.resolve(".7.tmp"), victim);
        try (Daemon daemon = TestDaemon.start(config)) {
            Session root = DaemonSessions.as(daemon, "root", 0, ProcessHandle.current().pid(), new java.util.ArrayList<>());
            List<Frame> r = DaemonSessions.answered(root, Frame.of(2, Code.JOB_START.value(), "{\"job\":\"7\",\"user\":\"nobody\","
                    + "\"request\":\"gpu=1\"}"));
            assertThat(r.get(r.size() - 1)).as(r.toString()).isEqualTo(Session.ok(2));
            assertThat(mode(config.stateDir().resolve("journal"))).isEqualTo("rw-------");
            assertThat(mode(env)).isEqualTo("rwx--x--x");
            assertThat(mode(env.resolve("7"))).isEqualTo("r--------");
            assertThat(Files.getOwner(env.resolve("7"), LinkOption.NOFOLLOW_LINKS).getName()).isEqualTo("nobody");
            assertThat(Files.readString(victim)).isEqualTo("precious\n");
            assertThat(mode(victim)).isEqualTo("rw-------");
            // the job's owner reads it through the 0711 directories; another user does not
            assertThat(ExecdCell.sh("chmod 0711 " + tmp + " " + tmp.resolve("c") + " " + config.stateDir()
                    + "; setpriv --reuid nobody --regid nogroup --clear-groups cat " + env.resolve("7")))
                    .isEqualTo("SGE_HGR_gpu=0\n");
            assertThat(ExecdCell.sh("setpriv --reuid daemon --regid daemon --clear-groups cat " + env.resolve("7")))
                    .contains("Permission denied");
        }
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }
}
