// The budget of the socket server over real Unix sockets: the per-uid connection
// limit and the privileged exemption, idle and slow-frame timeouts, shedding of input and output beyond
// the totals (never a privileged peer), answers in order, and event streams as before.
package rsmap.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class ServerBudgetTest {
    @TempDir
    Path tmp;
    SocketServer server;
    final List<Session> streams = new CopyOnWriteArrayList<>();

    /**
     * QUERY answers one STATE of {@code "{n}"} bytes ("n" the first argument, 1 if none) after sleeping
     * as long as a second argument says (ms); START_EVENTS leaves its command open.
     */
    Session.Handler handler() {
        return (code, command, session) -> {
            switch (code) {
                case QUERY: {
                    int n = command.args().isEmpty() ? 1 : Integer.parseInt(command.text(0));
                    if (command.args().size() > 1) {
                        sleep(Long.parseLong(command.text(1)));
                    }
                    return List.of(Frame.of(command.tid(), Code.STATE.value(), "x".repeat(n)));
                }
                case START_EVENTS:
                    streams.add(session);
                    session.keepOpen();
                    return List.of();
                default:
                    throw new Session.CommandException(Category.REFUSED, "not here");
            }
        };
    }

    /** A slow handler or credential check: the slowness the test is about. */
    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    SocketServer start(ServerLimits limits, Predicate<Session.Peer> privileged) throws IOException {
        server = new SocketServer(tmp.resolve("s.sock"), this::handler, limits, privileged, "", "rw-rw----");
        return server;
    }

    @AfterEach
    void stop() throws IOException {
        if (server != null) {
            server.close();
        }
    }

    /**
     * Whether the server closed {@code c}: end of stream, or (Linux, AF_UNIX) ECONNRESET after the last
     * bytes when the server closed with some of the client's bytes still unread.
     */
    static boolean closed(TestClient c) throws Exception {
        try {
            return c.next() == null;
        } catch (java.net.SocketException e) {
            return e.getMessage().contains("reset");
        }
    }

    TestClient initialised() throws Exception {
        TestClient c = new TestClient(server.path());
        assertThat(c.call(Frame.of(1, Code.INIT.value(), Session.VERSION))).containsExactly(Session.ok(1));
        return c;
    }

    /** Every connection of this JVM is root's: the predicate decides who is privileged here. */
    static final Predicate<Session.Peer> NOBODY = p -> false;

    @Test
    void perUserLimit_unprivileged_theNextConnectionGetsOneErrorAndIsClosed() throws Exception {
        start(ServerLimits.defaults(4096).withPerUserConnections(3), NOBODY);
        List<TestClient> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            held.add(initialised());
        }
        try (TestClient over = new TestClient(server.path())) {
            Frame refusal = over.next();
            assertThat(refusal.tid()).isZero();
            assertThat(refusal.code()).isEqualTo(Code.ERROR.value());
            assertThat(refusal.text(0)).isEqualTo("too many connections of user '" + System.getProperty("user.name")
                    + "' (uid " + uid() + "): the limit is 3 per user");
            assertThat(over.next()).as("closed after its ERROR").isNull();
        }
        // One goes away: its place is free again (once the server saw it go).
        held.remove(0).close();
        TestClient again = awaitAdmitted();
        assertThat(again.call(Frame.of(2, Code.QUERY.value()))).hasSize(2);
        again.close();
        for (TestClient c : held) {
            assertThat(c.call(Frame.of(3, Code.QUERY.value()))).as("the held ones are served").hasSize(2);
            c.close();
        }
        assertThat(server.counters().refused()).isGreaterThanOrEqualTo(1);
    }

    private TestClient awaitAdmitted() throws Exception {
        TestClient admitted = Polls.retry(Duration.ofSeconds(5), () -> {
            TestClient c = new TestClient(server.path());
            try {
                c.send(Frame.of(1, Code.INIT.value(), Session.VERSION).encode());
                if (Session.ok(1).equals(c.next())) {
                    return c;
                }
            } catch (IOException e) {
                // refused and closed before the INIT went out: try again
            }
            c.close();
            return null;
        }, c -> c != null);
        if (admitted == null) {
            throw new AssertionError("never admitted again");
        }
        return admitted;
    }

    private static long uid() throws IOException {
        return Long.parseLong(new String(new ProcessBuilder("id", "-u").start().getInputStream().readAllBytes(),
                StandardCharsets.US_ASCII).strip());
    }

    @Test
    void perUserLimit_privilegedPeer_isExempt() throws Exception {
        start(ServerLimits.defaults(4096).withPerUserConnections(1), p -> true);
        List<TestClient> many = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            many.add(initialised());
        }
        for (TestClient c : many) {
            assertThat(c.call(Frame.of(2, Code.QUERY.value()))).hasSize(2);
            c.close();
        }
        assertThat(server.counters().refused()).isZero();
    }

    @Test
    void idleTimeout_closesAQuietConnection_notOneWithAStreamOrACommandInFlight() throws Exception {
        start(ServerLimits.defaults(4096).withIdleTimeout(Duration.ofMillis(300)), NOBODY);
        try (TestClient quiet = initialised(); TestClient streaming = initialised(); TestClient slow = initialised()) {
            streaming.send(Frame.of(5, Code.START_EVENTS.value()).encode());
            slow.send(Frame.of(6, Code.QUERY.value(), "3", "1200").encode()); // 1.2 s in the handler
            long t0 = System.nanoTime();
            Frame bye = quiet.next();
            long waited = (System.nanoTime() - t0) / 1_000_000;
            assertThat(bye).isEqualTo(Session.error(0, "idle for 0.3 s: the connection is closed", Category.BUSY));
            assertThat(quiet.next()).isNull();
            assertThat(waited).isBetween(200L, 2000L);
            assertThat(slow.untilDone(6)).containsExactly(Frame.of(6, Code.STATE.value(), "xxx"), Session.ok(6));
            // The stream stayed open all along: an event still arrives, then its end.
            assertThat(streams).hasSize(1);
            assertThat(streams.get(0).post(Frame.of(5, Code.DIFF.value(), "{}"), false)).isTrue();
            assertThat(streams.get(0).post(Session.ok(5), true)).isTrue();
            assertThat(streaming.untilDone(5)).containsExactly(Frame.of(5, Code.DIFF.value(), "{}"), Session.ok(5));
            // Stream over: now it is idle like any other.
            assertThat(streaming.next()).isEqualTo(Session.error(0, "idle for 0.3 s: the connection is closed", Category.BUSY));
        }
    }

    @Test
    void frameTimeout_aFrameBegunAndNotFinished_isAnErrorAndTheConnectionCloses() throws Exception {
        start(ServerLimits.defaults(4096).withFrameTimeout(Duration.ofMillis(400)), NOBODY);
        try (TestClient stalled = initialised(); TestClient trickle = initialised()) {
            stalled.send("0000001".getBytes(StandardCharsets.US_ASCII));
            byte[] query = Frame.of(2, Code.QUERY.value()).encode();
            for (byte b : query) { // a whole frame within the timeout, a byte at a time, is fine
                trickle.send(new byte[] {b});
                Thread.sleep(10); // the thing tested: the frame's bytes 10 ms apart
            }
            assertThat(trickle.untilDone(2)).hasSize(2);
            assertThat(stalled.next()).isEqualTo(Session.error(0, "a frame was not complete within 0.4 s: the"
                    + " connection is closed", Category.BUSY));
            assertThat(stalled.next()).isNull();
        }
        assertThat(server.counters().timedOut()).isEqualTo(1);
    }

    @Test
    void inputBudget_exceeded_shedsTheLargestUnprivilegedConnection_neverAPrivilegedOne() throws Exception {
        int maxFrame = 1 << 20;
        AtomicInteger order = new AtomicInteger();
        // The first connection is privileged, the others are not (all of them are this JVM's).
        // 400 KiB (privileged) + 8 KiB (small: one chunk) + ~800 KiB of large's frame is over it.
        start(ServerLimits.defaults(maxFrame).withMaxBufferedInput(1200 << 10), p -> order.getAndIncrement() == 0);
        try (TestClient privileged = initialised(); TestClient small = initialised(); TestClient large = initialised()) {
            byte[] mine = Frame.of(7, Code.QUERY.value(), "x".repeat(600 << 10)).encode();
            byte[] other = Frame.of(8, Code.QUERY.value(), "2", "0", "x".repeat(590 << 10)).encode();
            byte[] huge = Frame.of(9, Code.QUERY.value(), "x".repeat(1000 << 10)).encode();
            privileged.send(Arrays.copyOf(mine, 400 << 10));
            small.send(Arrays.copyOf(other, 1024));
            Thread.sleep(200); // both are read and held before large's frame comes: the order of the budget
            try {
                large.send(Arrays.copyOf(huge, 1000 << 10));
            } catch (IOException e) {
                // shed while it was still sending: what it was told is still there to read
            }
            Frame shed = large.next();
            assertThat(shed.tid()).isZero();
            assertThat(shed.text(0)).startsWith("rsmapd holds more partial frames than its budget of 1228800 bytes;"
                    + " this connection held the most (");
            assertThat(closed(large)).isTrue();
            // The privileged one and the small one finish their frames and are answered.
            privileged.send(Arrays.copyOfRange(mine, 400 << 10, mine.length));
            assertThat(privileged.untilDone(7)).hasSize(1); // "x..." is no number: an internal error, but an answer
            small.send(Arrays.copyOfRange(other, 1024, other.length));
            assertThat(small.untilDone(8)).containsExactly(Frame.of(8, Code.STATE.value(), "xx"), Session.ok(8));
        }
        assertThat(server.counters().shed()).isEqualTo(1);
    }

    @Test
    void outputBudget_exceeded_shedsAnUnprivilegedReaderThatDoesNotRead_notAPrivilegedOne() throws Exception {
        AtomicInteger order = new AtomicInteger();
        start(ServerLimits.defaults(4096).withMaxQueuedOutput(512 << 10), p -> order.getAndIncrement() == 0);
        try (TestClient privileged = initialised(); TestClient sleeper = initialised()) {
            StringBuilder pipelined = new StringBuilder();
            for (int tid = 10; tid < 40; tid++) {
                pipelined.append(Frame.of(tid, Code.QUERY.value(), Integer.toString(100 << 10)).toString());
            }
            byte[] many = pipelined.toString().getBytes(StandardCharsets.US_ASCII);
            privileged.send(many); // 30 answers of 100 KiB, and neither reads for now
            sleeper.send(many);
            Polls.await(Duration.ofSeconds(5), () -> server.counters().shed() > 0);
            assertThat(server.counters().shed()).isGreaterThanOrEqualTo(1);
            int answers = 0;
            try {
                for (Frame f = sleeper.next(); f != null; f = sleeper.next()) {
                    answers += f.code() == Code.OK.value() ? 1 : 0;
                }
            } catch (java.net.SocketException e) {
                assertThat(e).hasMessageContaining("reset"); // see closed()
            }
            assertThat(answers).as("the sleeper was cut off").isLessThan(30);
            for (int tid = 10; tid < 40; tid++) {
                assertThat(privileged.untilDone(tid)).hasSize(2);
            }
        }
    }

    @Test
    void pipelinedCommands_areAnsweredOneAtATimeInOrder_onEveryConnection() throws Exception {
        start(ServerLimits.defaults(4096).withWorkers(4), NOBODY);
        List<TestClient> clients = new ArrayList<>();
        Random rnd = new Random(11);
        for (int c = 0; c < 8; c++) {
            TestClient t = initialised();
            StringBuilder b = new StringBuilder();
            for (int tid = 100; tid < 120; tid++) { // random handler times: a later command could finish first
                b.append(Frame.of(tid, Code.QUERY.value(), Integer.toString(tid), Integer.toString(rnd.nextInt(5))));
            }
            t.send(b.toString().getBytes(StandardCharsets.US_ASCII));
            clients.add(t);
        }
        for (TestClient t : clients) {
            for (int tid = 100; tid < 120; tid++) {
                assertThat(t.untilDone(tid)).containsExactly(Frame.of(tid, Code.STATE.value(), "x".repeat(tid)),
                        Session.ok(tid));
            }
            t.close();
        }
    }

    @Test
    void post_toAReaderThatStopped_isRefusedBeyondTheBacklog_unlessForced() throws Exception {
        start(ServerLimits.defaults(4096).withMaxEventBacklog(64 << 10), NOBODY);
        try (TestClient sleeper = initialised()) {
            sleeper.send(Frame.of(5, Code.START_EVENTS.value()).encode());
            Polls.until("the stream started", () -> !streams.isEmpty());
            Session s = streams.get(0);
            Frame diff = Frame.of(5, Code.DIFF.value(), "d".repeat(1000));
            int posted = 0;
            long t0 = System.nanoTime();
            while (s.post(diff, false)) { // socket buffers first, then the backlog
                posted++;
                assertThat(posted).isLessThan(100_000);
            }
            assertThat((System.nanoTime() - t0) / 1_000_000).as("post never blocks").isLessThan(5000);
            assertThat(s.post(Session.error(5, "dropped", Category.INTERNAL), true)).isTrue();
            int diffs = 0;
            Frame f;
            while ((f = sleeper.next()).code() == Code.DIFF.value()) {
                diffs++;
            }
            assertThat(diffs).isEqualTo(posted);
            assertThat(f).isEqualTo(Session.error(5, "dropped", Category.INTERNAL));
        }
    }

    @Test
    void quit_isAnsweredThenTheConnectionCloses() throws Exception {
        start(ServerLimits.defaults(4096), NOBODY);
        try (TestClient c = initialised()) {
            c.send((Frame.of(2, Code.QUERY.value(), "5").toString() + Frame.of(3, Code.QUIT.value())
                    + Frame.of(4, Code.QUERY.value())).getBytes(StandardCharsets.US_ASCII));
            assertThat(c.untilDone(2)).hasSize(2);
            assertThat(c.untilDone(3)).containsExactly(Session.ok(3));
            assertThat(c.next()).as("nothing after QUIT").isNull();
        }
    }

    /** limits | expected refusal: every row a rule of ServerLimits' constructor. */
    @Test
    void limits_outOfRange_areRefusedNamingTheField() {
        ServerLimits d = ServerLimits.defaults();
        assertThatThrownBy(() -> d.withPerUserConnections(0)).hasMessageContaining("perUserConnections 0");
        assertThatThrownBy(() -> d.withMaxBufferedInput(1000)).hasMessageContaining("maxBufferedInput 1000");
        assertThatThrownBy(() -> d.withMaxQueuedOutput(0)).hasMessageContaining("maxQueuedOutput");
        assertThatThrownBy(() -> d.withIdleTimeout(Duration.ofSeconds(-1))).hasMessageContaining("idleTimeout");
        assertThatThrownBy(() -> d.withFrameTimeout(null)).hasMessageContaining("frameTimeout");
        assertThatThrownBy(() -> d.withWorkers(0)).hasMessageContaining("workers 0");
        assertThatThrownBy(() -> d.withMaxUnauthenticated(0)).hasMessageContaining("maxUnauthenticated 0");
        assertThatThrownBy(() -> d.withLoginTimeout(Duration.ZERO)).hasMessageContaining("loginTimeout must be");
        assertThatThrownBy(() -> new ServerLimits(4, 1, 1 << 20, 1, 1, Duration.ZERO, Duration.ZERO, 1))
                .hasMessageContaining("maxFrame 4");
        assertThat(d.perUserConnections()).isEqualTo(32);
        assertThat(d.maxUnauthenticated()).isEqualTo(1024);
        assertThat(d.loginTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(d.maxFrame()).isEqualTo(FrameDecoder.DEFAULT_MAX_FRAME);
    }
}
