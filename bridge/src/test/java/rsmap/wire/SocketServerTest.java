// The protocol rules over a real Unix socket: INIT first with a matching version, one OK or ERROR per
// TID, QUIT, bad frames answered (and the connection closed when the stream cannot be delimited), and
// clients that do not block each other.
package rsmap.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SocketServerTest {
    @TempDir
    Path tmp;
    SocketServer server;

    /** A handler for the test: QUERY answers one STATE event; RELOAD is refused. */
    static Session.Handler handler() {
        return (code, command, session) -> {
            Session.Peer peer = session.peer();
            switch (code) {
                case QUERY:
                    return List.of(Frame.of(command.tid(), Code.STATE.value(), "{\"host\":\"node01\"}"));
                case MODEL_DEF:
                    return List.of(Frame.of(command.tid(), Code.STATE.value(), peer.user(), peer.group(),
                            Long.toString(peer.pid()), Long.toString(peer.uid())));
                case RELOAD:
                    throw new Session.CommandException(Category.REFUSED, "RELOAD would remove instance 0 held by job 7");
                default:
                    throw new IllegalStateException("boom");
            }
        };
    }

    @BeforeEach
    void start() throws IOException {
        server = new SocketServer(tmp.resolve("rsmapd.sock"), SocketServerTest::handler, 4096);
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
    }

    /** A protocol client on the server's socket. */
    final class Client implements AutoCloseable {
        final TestClient c;

        Client() throws IOException {
            c = new TestClient(server.path());
        }

        void send(byte[] bytes) throws IOException {
            c.send(bytes);
        }

        List<Frame> call(Frame command) throws Exception {
            return c.call(command);
        }

        List<Frame> untilDone(long tid) throws Exception {
            return c.untilDone(tid);
        }

        boolean closedByServer() throws IOException {
            return c.closedByServer();
        }

        @Override
        public void close() throws IOException {
            c.close();
        }
    }

    static Frame init(long tid, String version) {
        return Frame.of(tid, Code.INIT.value(), version);
    }

    @Test
    void init_matchingVersion_isOk_andQueryAnswersEventsThenOk() throws Exception {
        try (Client c = new Client()) {
            assertThat(c.call(init(1, "1"))).containsExactly(Session.ok(1));
            assertThat(c.call(Frame.of(2, Code.QUERY.value()))).containsExactly(
                    Frame.of(2, Code.STATE.value(), "{\"host\":\"node01\"}"), Session.ok(2));
        }
    }

    @Test
    void init_otherVersion_isAnErrorNamingBothVersions() throws Exception {
        try (Client c = new Client()) {
            assertThat(c.call(init(5, "2"))).containsExactly(
                    Session.error(5, "protocol version 2 is not supported; rsmapd speaks version 1", Category.MALFORMED));
        }
    }

    @Test
    void command_beforeInit_isRefused() throws Exception {
        try (Client c = new Client()) {
            assertThat(c.call(Frame.of(3, Code.QUERY.value()))).containsExactly(Session.error(3, "INIT must come first", Category.MALFORMED));
            assertThat(c.call(init(4, "1"))).containsExactly(Session.ok(4)); // and the session goes on
        }
    }

    @Test
    void commandFailures_areErrorEvents_neverAClosedSocket() throws Exception {
        try (Client c = new Client()) {
            c.call(init(1, "1"));
            assertThat(c.call(Frame.of(6, Code.RELOAD.value()))).containsExactly(
                    Session.error(6, "RELOAD would remove instance 0 held by job 7", Category.REFUSED));
            java.io.ByteArrayOutputStream log = new java.io.ByteArrayOutputStream();
            java.io.PrintStream stderr = System.err;
            System.setErr(new java.io.PrintStream(log, true, java.nio.charset.StandardCharsets.UTF_8));
            try {
                // A handler that throws: the client is told "internal", the log keeps the stack trace.
                assertThat(c.call(Frame.of(7, Code.JOB_END.value()))).singleElement().satisfies(f -> {
                    assertThat(f.text(0)).startsWith("internal error: java.lang.IllegalStateException: boom");
                    assertThat(f.text(1)).isEqualTo("internal");
                });
            } finally {
                System.setErr(stderr);
            }
            assertThat(log.toString(java.nio.charset.StandardCharsets.UTF_8))
                    .contains("rsmapd: error: JOB_END (TID 7) failed: java.lang.IllegalStateException: boom")
                    .contains("at rsmap.wire.SocketServerTest");
            assertThat(c.call(Frame.of(8, 0x7777))).containsExactly(Session.error(8, "unknown command code 7777", Category.MALFORMED));
            assertThat(c.call(Frame.of(9, Code.OK.value()))).containsExactly(Session.error(9, "unknown command code 8000", Category.MALFORMED));
            assertThat(c.call(Frame.of(10, Code.QUERY.value()))).hasSize(2);
        }
    }

    @Test
    void peer_isKnownFromTheKernel_nameAndPid() throws Exception {
        String me = System.getProperty("user.name");
        try (Client c = new Client()) {
            c.call(init(1, "1"));
            Frame state = c.call(Frame.of(2, Code.MODEL_DEF.value())).get(0);
            assertThat(state.text(0)).isEqualTo(me);
            // The pid comes from getsockopt(SO_PEERCRED): the client is this very JVM.
            assertThat(state.text(2)).as(PeerCredentials.UNAVAILABLE).isEqualTo(Long.toString(ProcessHandle.current().pid()));
            assertThat(Long.parseLong(state.text(3))).isEqualTo(me.equals("root") ? 0 : Long.parseLong(state.text(3)));
        }
    }

    /**
     * The selector yields its CPU after handing a worker a job's start or end from a privileged peer (the
     * hooks execd and the job shell wait for), and for nothing else: not for a user's command, not for
     * QUERY, not for a session's end.
     */
    @Test
    void selectorYields_onlyAfterAPrivilegedJobStartOrEnd() {
        assertThat(SocketServer.jobStep(true, Frame.of(1, Code.JOB_START.value(), "{}"))).isTrue();
        assertThat(SocketServer.jobStep(true, Frame.of(1, Code.JOB_END.value(), "{}"))).isTrue();
        assertThat(SocketServer.jobStep(false, Frame.of(1, Code.JOB_START.value(), "{}"))).isFalse();
        assertThat(SocketServer.jobStep(false, Frame.of(1, Code.JOB_END.value(), "{}"))).isFalse();
        assertThat(SocketServer.jobStep(true, Frame.of(1, Code.QUERY.value()))).isFalse();
        assertThat(SocketServer.jobStep(true, Frame.of(1, Code.INIT.value(), "1"))).isFalse();
        assertThat(SocketServer.jobStep(true, null)).as("a session's end").isFalse();
    }

    @Test
    void socket_isMode0660_fromItsFirstMoment() throws Exception {
        assertThat(java.nio.file.Files.getPosixFilePermissions(server.path()))
                .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw----"));
    }

    @Test
    void quit_isOk_andEndsTheConnection() throws Exception {
        try (Client c = new Client()) {
            c.call(init(1, "1"));
            assertThat(c.call(Frame.of(2, Code.QUIT.value()))).containsExactly(Session.ok(2));
            assertThat(c.closedByServer()).isTrue();
        }
    }

    @Test
    void badFrame_inside_isAnErrorWithItsTid_andTheNextFrameIsServed() throws Exception {
        try (Client c = new Client()) {
            c.call(init(1, "1"));
            c.send("0000000e0000002a0012 x".getBytes(StandardCharsets.US_ASCII));
            List<Frame> err = c.untilDone(42);
            assertThat(err).singleElement().satisfies(f -> assertThat(f.text(0)).contains("has no HEXLEN: prefix"));
            assertThat(c.call(Frame.of(43, Code.QUERY.value()))).hasSize(2);
        }
    }

    @Test
    void undelimitableStream_isAnErrorAndTheConnectionCloses() throws Exception {
        try (Client c = new Client()) {
            c.send("zzzzzzzz".getBytes(StandardCharsets.US_ASCII));
            List<Frame> err = c.untilDone(0);
            assertThat(err).singleElement().satisfies(f -> assertThat(f.text(0)).contains("LENGTH is not 8 hex digits"));
            assertThat(c.closedByServer()).isTrue();
        }
    }

    @Test
    void oversizedFrame_isRefusedAndTheConnectionCloses() throws Exception {
        try (Client c = new Client()) {
            c.send("00100000".getBytes(StandardCharsets.US_ASCII));
            assertThat(c.untilDone(0)).singleElement()
                    .satisfies(f -> assertThat(f.text(0)).contains("larger than the maximum 4096"));
            assertThat(c.closedByServer()).isTrue();
        }
    }

    @Test
    void aSilentClient_doesNotBlockAnother() throws Exception {
        try (Client idle = new Client(); Client busy = new Client()) {
            idle.send("0000".getBytes(StandardCharsets.US_ASCII)); // half a length field, then nothing
            assertThat(busy.call(init(1, "1"))).containsExactly(Session.ok(1));
            assertThat(busy.call(Frame.of(2, Code.QUERY.value()))).hasSize(2);
        }
    }
}
