// A new job's environment file is written once its JOB_START is answered (the prolog does not wait for
// it), before the daemon runs any later command, and a restart makes again what a kill left out.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Polls;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

class EnvFileAfterAnswerTest {
    @TempDir
    Path tmp;

    private static Frame start(long tid, String job, String request) {
        return Frame.of(tid, Code.JOB_START.value(), "{\"job\":\"" + job + "\",\"user\":\"nobody\",\"request\":\""
                + request + "\"}");
    }

    private static Frame end(long tid, String job) {
        return Frame.of(tid, Code.JOB_END.value(), "{\"job\":\"" + job + "\"}");
    }

    private static Session root(Daemon d) {
        return DaemonSessions.as(d, "root", 0, 0, new ArrayList<>());
    }

    @Test
    void aJobsFile_isWrittenAfterItsAnswer_andBeforeTheNextCommandRuns() throws Exception {
        Config config = TestDaemon.config(tmp, "gpu=2(0 1)", "reconcile_interval = 0");
        Path env = config.stateDir().resolve("env");
        try (Daemon d = TestDaemon.start(config)) {
            Session s = root(d);
            List<Frame> a = s.onCommand(start(2, "7", "gpu=1"));
            assertThat(a.get(a.size() - 1)).as(a.toString()).isEqualTo(Session.ok(2));
            assertThat(env.resolve("7")).as("not before the answer is sent").doesNotExist();
            List<Frame> b = s.onCommand(start(3, "8", "gpu=1"));
            assertThat(b.get(b.size() - 1)).as(b.toString()).isEqualTo(Session.ok(3));
            assertThat(env.resolve("7")).as("before the next command ran").hasContent("SGE_HGR_gpu=0\n");
            assertThat(env.resolve("8")).doesNotExist();
            s.answered(); // what the server does once it has sent the answer
            assertThat(env.resolve("8")).hasContent("SGE_HGR_gpu=1\n");
        }
    }

    @Test
    void aJobEndedBeforeItsStartsAnswerWasSent_getsNoFile_andItsLinesKeepTheirOrder() throws Exception {
        Config config = TestDaemon.config(tmp, "gpu=2(0 1)", "reconcile_interval = 0");
        try (Daemon d = TestDaemon.start(config)) {
            Session s = root(d);
            s.onCommand(start(2, "7", "gpu=1"));
            assertThat(d.logged()).noneMatch(l -> l.contains("job 7 (nobody) granted"));
            assertThat(s.onCommand(end(3, "7"))).containsExactly(Session.ok(3));
            s.answered();
            List<String> lines = d.logged().stream().filter(l -> l.startsWith("job 7 ")).toList();
            assertThat(lines).as(lines.toString()).hasSize(2);
            assertThat(lines.get(0)).startsWith("job 7 (nobody) granted {SGE_HGR_gpu=0}");
            assertThat(lines.get(1)).startsWith("job 7 released");
        }
        assertThat(config.stateDir().resolve("env").resolve("7")).doesNotExist();
    }

    @Test
    void overTheSocket_theFileFollowsTheAnswer() throws Exception {
        Config config = TestDaemon.config(tmp, "gpu=2(0 1)", "reconcile_interval = 0");
        Path file = config.stateDir().resolve("env").resolve("7");
        try (Daemon d = TestDaemon.start(config); TestClient c = new TestClient(config.socket())) {
            assertThat(c.call(Frame.of(1, Code.INIT.value(), Session.VERSION))).containsExactly(Session.ok(1));
            List<Frame> a = c.call(start(2, "7", "gpu=2"));
            assertThat(a.get(a.size() - 1)).as(a.toString()).isEqualTo(Session.ok(2));
            // whole once given to its owner (the last step: root's until its last byte, docs/isolation.md)
            Polls.until("the file of job 7 written after its answer", () -> Files.exists(file)
                    && Files.getOwner(file).getName().equals("nobody"));
            assertThat(file).hasContent("SGE_HGR_gpu=0 1\n");
        }
    }

    @Test
    void aRestart_makesAgainAFileAKillLeftOut_andOneThatSaysSomethingElse() throws Exception {
        Config config = twoJobsStarted();
        Path env = config.stateDir().resolve("env");
        Files.delete(env.resolve("7")); // killed after the answer, before the file
        Files.delete(env.resolve("8"));
        Files.writeString(env.resolve("8"), "SGE_HGR_gpu=0 1\n"); // killed between a record and its file
        Files.setPosixFilePermissions(env.resolve("8"), PosixFilePermissions.fromString("r--------"));
        try (Daemon d = TestDaemon.start(config)) {
            assertThat(env.resolve("7")).hasContent("SGE_HGR_gpu=0\n");
            assertThat(env.resolve("8")).hasContent("SGE_HGR_gpu=1\n");
            ownersAlone(env);
        }
    }

    @Test
    void aRestart_givesTheOwnerAFileAKillLeftRootsOrOfAnotherMode() throws Exception {
        Config config = twoJobsStarted();
        Path env = config.stateDir().resolve("env");
        // killed between the file's last byte and its chown: the right content, root's
        Files.setOwner(env.resolve("7"), env.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("root"));
        Files.setPosixFilePermissions(env.resolve("8"), PosixFilePermissions.fromString("rw-r--r--"));
        try (Daemon d = TestDaemon.start(config)) {
            ownersAlone(env);
            assertThat(env.resolve("7")).hasContent("SGE_HGR_gpu=0\n");
        }
    }

    /** Jobs 7 and 8 started (and their files written) on a daemon stopped since. */
    private Config twoJobsStarted() throws Exception {
        Config config = TestDaemon.config(tmp, "gpu=2(0 1)", "reconcile_interval = 0");
        try (Daemon d = TestDaemon.start(config)) {
            Session s = root(d);
            DaemonSessions.answered(s, start(2, "7", "gpu=1"));
            DaemonSessions.answered(s, start(3, "8", "gpu=1"));
        }
        return config;
    }

    /** The files of jobs 7 and 8 are their owner's, mode 0400. */
    private static void ownersAlone(Path env) throws Exception {
        for (String job : List.of("7", "8")) {
            assertThat(Files.getOwner(env.resolve(job)).getName()).as(job).isEqualTo("nobody");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(env.resolve(job)))).as(job)
                    .isEqualTo("r--------");
        }
    }
}
