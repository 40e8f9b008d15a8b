// Commands the session answers at once on the selector thread (a Unix peer's INIT, Handler#quick): never
// behind another connection's command stuck on a worker, and never ahead of their own connection's.
package rsmap.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InlineAnswerTest {
    /** How long an answer that must not wait for the stuck command may take (a loaded 2-core CI machine). */
    private static final long BOUND_SECONDS = 5;

    @TempDir
    Path tmp;
    SocketServer server;
    /** Released by the test: JOB_START's handler waits for it (a job start stuck in its journal force). */
    final CountDownLatch release = new CountDownLatch(1);
    final CountDownLatch entered = new CountDownLatch(1);

    /** QUERY: answered at once from "the cache"; JOB_START: stuck until released; MODEL_DEF: a worker's. */
    Session.Handler handler() {
        return new Session.Handler() {
            @Override
            public List<Frame> handle(Code code, Frame command, Session session) throws Session.CommandException {
                if (code == Code.JOB_START) {
                    entered.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return List.of();
                }
                if (code == Code.QUERY) {
                    return quick(code, command, session);
                }
                return List.of(Frame.of(command.tid(), Code.STATE.value(), "worker"));
            }

            @Override
            public List<Frame> quick(Code code, Frame command, Session session) {
                return code == Code.QUERY ? List.of(Frame.of(command.tid(), Code.STATE.value(), "kept")) : null;
            }
        };
    }

    @AfterEach
    void stop() throws IOException {
        release.countDown();
        if (server != null) {
            server.close();
        }
    }

    private static Frame init(long tid) {
        return Frame.of(tid, Code.INIT.value(), Session.VERSION);
    }

    private static byte[] encode(Frame... frames) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Frame f : frames) {
            out.writeBytes(f.encode());
        }
        return out.toByteArray();
    }

    @Test
    void quickAnswer_whileTheOnlyWorkerIsStuck_isGivenAndItsReadsGoOn_butNotAheadOfItsOwnConnection() throws Exception {
        // One worker: a command stuck on it holds every other worker's command; the selector's answers must not.
        server = new SocketServer(tmp.resolve("rsmapd.sock"), this::handler,
                ServerLimits.defaults(4096).withWorkers(1), Session.Peer::isRoot, "", "rw-rw----");
        try (TestClient a = new TestClient(server.path()); TestClient b = new TestClient(server.path())) {
            a.send(encode(init(1), Frame.of(2, Code.JOB_START.value(), "{}"), Frame.of(3, Code.QUERY.value())));
            assertThat(entered.await(BOUND_SECONDS, TimeUnit.SECONDS)).as("JOB_START reached its handler").isTrue();

            // Another connection, in separate writes (each read by the selector): INIT and QUERYs answered.
            List<Frame> got = CompletableFuture.supplyAsync(() -> {
                try {
                    List<Frame> all = new ArrayList<>(b.call(init(1)));
                    for (long tid = 2; tid <= 4; tid++) {
                        all.addAll(b.call(Frame.of(tid, Code.QUERY.value(), "{}")));
                    }
                    return all;
                } catch (IOException | FrameException e) {
                    throw new IllegalStateException(e);
                }
            }).get(BOUND_SECONDS, TimeUnit.SECONDS);
            assertThat(got).containsExactly(Session.ok(1), Frame.of(2, Code.STATE.value(), "kept"), Session.ok(2),
                    Frame.of(3, Code.STATE.value(), "kept"), Session.ok(3), Frame.of(4, Code.STATE.value(), "kept"),
                    Session.ok(4));

            // The stuck connection: INIT's OK only; its QUERY waits behind its JOB_START.
            assertThat(a.next()).isEqualTo(Session.ok(1));
            assertThat(a.nothingArrived()).as("nothing after INIT's OK while JOB_START is stuck").isTrue();
            release.countDown();
            assertThat(List.of(a.next(), a.next(), a.next())).containsExactly(Session.ok(2),
                    Frame.of(3, Code.STATE.value(), "kept"), Session.ok(3));
        }
    }

    @Test
    void pipelinedCommands_quickOrNot_areAnsweredInTheOrderSent() throws Exception {
        server = new SocketServer(tmp.resolve("rsmapd.sock"), this::handler,
                ServerLimits.defaults(4096).withWorkers(2), Session.Peer::isRoot, "", "rw-rw----");
        release.countDown();
        long seed = new Random().nextLong();
        Random r = new Random(seed);
        try (TestClient c = new TestClient(server.path())) {
            for (int round = 0; round < 20; round++) {
                int n = 1 + r.nextInt(3 * SocketServer.INLINE_RUN);
                List<Frame> sent = new ArrayList<>();
                List<Frame> expected = new ArrayList<>();
                if (round == 0) {
                    sent.add(init(1));
                    expected.add(Session.ok(1));
                }
                for (int i = 0; i < n; i++) {
                    long tid = 100L * round + i + 2;
                    boolean quick = r.nextInt(4) > 0;
                    sent.add(Frame.of(tid, (quick ? Code.QUERY : Code.MODEL_DEF).value()));
                    expected.add(Frame.of(tid, Code.STATE.value(), quick ? "kept" : "worker"));
                    expected.add(Session.ok(tid));
                }
                c.send(encode(sent.toArray(Frame[]::new)));
                List<Frame> got = new ArrayList<>();
                for (int i = 0; i < expected.size(); i++) {
                    got.add(c.next());
                }
                assertThat(got).as("seed %d, round %d", seed, round).containsExactlyElementsOf(expected);
            }
        }
    }
}
