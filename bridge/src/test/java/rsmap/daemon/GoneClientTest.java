// A client gone before the answer (docs/protocol.md): a JOB_START or REALLOC refused when its client left
// before the decision, a JOB_START granted while it left undone at once, and a retry's held grant kept.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.wire.Category;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

class GoneClientTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String GONE = ": the client closed its connection before it was decided; nothing granted";

    @TempDir
    Path tmp;

    /** A connection whose client is seen gone from the {@code seen}-th look on (0: at once). */
    private static Session leaving(Daemon daemon, int seen) {
        Session s = DaemonSessions.as(daemon, "root", 0, ProcessHandle.current().pid(), new ArrayList<>());
        int[] looks = {0};
        s.attach(new Session.Output() {
            @Override
            public boolean post(Frame frame, boolean force) {
                return false;
            }

            @Override
            public boolean clientClosed() {
                return looks[0]++ >= seen;
            }
        });
        return s;
    }

    private static Session root(Daemon daemon, List<Frame> events) {
        return DaemonSessions.as(daemon, "root", 0, ProcessHandle.current().pid(), events);
    }

    private static List<Frame> start(Session s, String job) {
        return s.onCommand(Frame.of(2, Code.JOB_START.value(), "{\"job\":\"" + job + "\",\"request\":\"gpu=1\"}"));
    }

    @Test
    void jobStart_clientGoneBeforeOrWhileDecided_holdsNothing_andTheNextJobGetsTheCard() throws Exception {
        Config config = TestDaemon.config(tmp, "gpu=1(0)", "reconcile_interval = 0");
        List<Frame> events = new ArrayList<>();
        try (Daemon daemon = TestDaemon.start(config)) {
            Session monitor = root(daemon, events);
            monitor.onCommand(Frame.of(9, Code.START_EVENTS.value()));
            // Gone before: refused, nothing decided.
            assertThat(start(leaving(daemon, 0), "6")).containsExactly(Session.error(2, "JOB_START of job 6" + GONE, Category.BUSY));
            // Gone while decided: granted, then ended at once ("client gone"), in the same force.
            assertThat(start(leaving(daemon, 1), "7")).containsExactly(Session.error(2, "JOB_START of job 7" + GONE, Category.BUSY));
            assertThat(daemon.jobs()).isEmpty();
            List<String> diffs = new ArrayList<>();
            for (Frame f : events) {
                if (f.code() == Code.DIFF.value()) {
                    JsonNode d = JSON.readTree(f.text(0));
                    diffs.add(d.path("event").asText() + " " + d.path("job").asText() + " " + d.path("why").asText());
                }
            }
            assertThat(diffs).containsExactly("grant 7 ", "release 7 client gone");
            // The card is free for the next job; a retry of its start from a client that leaves keeps it.
            assertThat(start(root(daemon, new ArrayList<>()), "8").get(0).code()).isEqualTo(Code.STATE.value());
            assertThat(start(leaving(daemon, 1), "8").get(0).code()).isEqualTo(Code.STATE.value());
            assertThat(daemon.jobs()).containsOnlyKeys("8");
            // REALLOC from a client gone before it is decided: refused, the job keeps what it had.
            List<Frame> grow = leaving(daemon, 0).onCommand(Frame.of(3, Code.REALLOC.value(),
                    "{\"job\":\"8\",\"add\":\"gpu=1\"}"));
            assertThat(grow).containsExactly(Session.error(3, "REALLOC of job 8" + GONE, Category.BUSY));
        }
        try (Daemon again = TestDaemon.start(config)) {
            assertThat(again.jobs()).as("the journal: job 7 ended").containsOnlyKeys("8");
        }
    }
}
