// A client that opens an event stream and never reads: job starts go on at their pace, and the stream
// ends with an ERROR for its START_EVENTS once too much waits for it (docs/protocol.md, "Event stream").
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

@Timeout(120)
class SlowSubscriberTest {
    @TempDir
    Path tmp;
    Config config;
    Daemon daemon;

    @BeforeEach
    void start() throws Exception {
        config = TestDaemon.config(tmp, "gpu=2(0 1)", "reconcile_interval = 0");
        Daemon built = new Daemon(config, ComplexTable.parse(Files.readString(config.complexes())),
                config.complexes().resolveSibling("rsmapd.conf"));
        // a small backlog so that the test needs few events (the socket's own buffers come on top)
        daemon = built.serve(built.limits().withMaxEventBacklog(64 << 10));
    }

    @AfterEach
    void stop() throws Exception {
        daemon.close();
    }

    @Test
    void aSubscriberThatNeverReads_blocksNoJobStart_andLosesItsStreamWithAnError() throws Exception {
        try (TestClient sleeper = new TestClient(config.socket()); TestClient actor = new TestClient(config.socket())) {
            sleeper.call(Frame.of(1, Code.INIT.value(), Session.VERSION));
            sleeper.send(Frame.of(5, Code.START_EVENTS.value()).encode()); // and then reads nothing
            actor.call(Frame.of(1, Code.INIT.value(), Session.VERSION));
            for (int i = 0; i < 2500; i++) { // ~5,000 diffs of ~200 bytes: far beyond backlog and socket buffers
                assertThat(actor.call(Frame.of(2, Code.JOB_START.value(), "{\"job\":\"" + i
                        + "\",\"user\":\"alice\",\"request\":\"gpu=1\"}"))).endsWith(Session.ok(2));
                assertThat(actor.call(Frame.of(3, Code.JOB_END.value(), "{\"job\":\"" + i + "\"}")))
                        .containsExactly(Session.ok(3));
            }
            // Now the sleeper reads: the state, the diffs that fitted, then its stream's end.
            Frame f;
            int diffs = 0;
            do {
                f = sleeper.next();
                assertThat(f).as("the stream ends with an ERROR, not a closed connection").isNotNull();
                diffs += f.code() == Code.DIFF.value() ? 1 : 0;
            } while (f.code() != Code.ERROR.value());
            assertThat(f.tid()).isEqualTo(5);
            assertThat(f.text(0)).startsWith("event stream dropped: the client read too slowly");
            assertThat(diffs).isBetween(1, 4999);
            // The session itself goes on: a new stream starts with the full state.
            sleeper.send(Frame.of(6, Code.START_EVENTS.value()).encode());
            assertThat(sleeper.next().code()).isEqualTo(Code.STATE.value());
        }
    }
}
