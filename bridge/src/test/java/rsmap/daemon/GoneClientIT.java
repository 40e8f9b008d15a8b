// A client gone before its command is decided gets nothing: a prolog that gave up waiting while rsmapd was
// stopped (and told execd to reschedule) leaves no grant behind (docs/protocol.md, "A client gone before
// the answer").
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Polls;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

@Timeout(120)
class GoneClientIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void jobStartAndRealloc_clientClosedWhileRsmapdStopped_grantNothing() throws Exception {
        Config config = TestDaemon.config(tmp, "gpu=2(0 1)", "reconcile_interval = 0");
        Path log = tmp.resolve("rsmapd.log");
        Process daemon = RsmapdProcess.start(config.complexes().resolveSibling("rsmapd.conf"), config.socket(), log);
        try (TestClient admin = new TestClient(config.socket())) {
            assertThat(admin.call(Frame.of(1, Code.INIT.value(), Session.VERSION))).containsExactly(Session.ok(1));
            assertThat(admin.call(start(2, "5")).get(0).code()).isEqualTo(Code.STATE.value());

            // One command per connection: the answer to a closed connection fails to go out, and rsmapd
            // may then drop what the client sent behind it (which grants nothing either).
            TestClient prolog = new TestClient(config.socket());
            TestClient shell = new TestClient(config.socket());
            assertThat(prolog.call(Frame.of(1, Code.INIT.value(), Session.VERSION))).containsExactly(Session.ok(1));
            assertThat(shell.call(Frame.of(1, Code.INIT.value(), Session.VERSION))).containsExactly(Session.ok(1));
            signal(daemon, "STOP");
            prolog.send(start(2, "7").encode());
            shell.send(Frame.of(2, Code.REALLOC.value(), "{\"job\":\"5\",\"add\":\"gpu=1\"}").encode());
            prolog.close(); // they gave up waiting: closed before rsmapd read their commands
            shell.close();
            signal(daemon, "CONT");

            Polls.until("rsmapd decides the commands of the closed connections", () -> {
                String text = Files.readString(log);
                return text.contains("JOB_START of job 7: the client closed its connection")
                        && text.contains("REALLOC of job 5: the client closed its connection")
                        || !query(admin, 10, "7").isEmpty() || grantOf(admin, "5").size() > 1;
            });
            assertThat(query(admin, 11, "7")).as("job 7 holds nothing").isEmpty();
            assertThat(grantOf(admin, "5")).as("job 5 did not grow").hasSize(1);
            assertThat(Files.readString(log)).contains("JOB_START of job 7: the client closed its connection before"
                    + " it was decided; nothing granted");
            List<Frame> next = admin.call(start(12, "8"));
            assertThat(next.get(0).code()).as("the instance is free for the next job: %s", next)
                    .isEqualTo(Code.STATE.value());
        } finally {
            signal(daemon, "CONT");
            daemon.destroy();
            daemon.waitFor(30, TimeUnit.SECONDS);
            daemon.destroyForcibly();
        }
    }

    private static Frame start(long tid, String job) {
        return Frame.of(tid, Code.JOB_START.value(), "{\"job\":\"" + job + "\",\"request\":\"gpu=1\"}");
    }

    /** The job's grant on node01's gpu map; empty when the job holds nothing. */
    private static List<String> query(TestClient c, long tid, String job) throws Exception {
        List<Frame> r = c.call(Frame.of(tid, Code.QUERY.value(), "{\"job\":\"" + job + "\"}"));
        if (r.get(0).code() == Code.ERROR.value()) {
            return List.of();
        }
        List<String> ids = new java.util.ArrayList<>();
        JsonNode state = JSON.readTree(r.get(0).text(0));
        state.findValues("grants").forEach(g -> g.path("node01").path("gpu").forEach(i -> ids.add(i.asText())));
        return ids;
    }

    private static List<String> grantOf(TestClient c, String job) throws Exception {
        return query(c, 20, job);
    }

    private static void signal(Process p, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start();
        assertThat(kill.waitFor()).isZero();
    }
}
