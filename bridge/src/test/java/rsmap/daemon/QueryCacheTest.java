// QUERY of the whole state answered from what the daemon keeps of it, per viewer: root and the admin, or one
// user whose view masks the others' jobs; given at once (no lock), and never stale after a change.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.authority.AuthorityTest;
import rsmap.daemon.config.Config;
import rsmap.daemon.job.Views;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

@Timeout(60)
class QueryCacheTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;
    Config config;
    Daemon daemon;

    @BeforeEach
    void start() throws Exception {
        Files.createDirectories(tmp.resolve("spool/active_jobs"));
        config = TestDaemon.config(tmp, "nic=2(ib0 ib1)", "reconcile_interval = 0");
        daemon = TestDaemon.start(config);
    }

    @AfterEach
    void stop() throws Exception {
        daemon.close();
    }

    private TestClient root() throws Exception {
        TestClient c = new TestClient(config.socket());
        assertThat(c.call(Frame.of(1, Code.INIT.value(), Session.VERSION))).containsExactly(Session.ok(1));
        return c;
    }

    private static Frame start(long tid, String job, String user) {
        return Frame.of(tid, Code.JOB_START.value(), "{\"job\":\"" + job + "\",\"user\":\"" + user
                + "\",\"slots\":1,\"request\":\"nic=1\"}");
    }

    /** A session of an unprivileged user, as the kernel would name it, talking to the daemon directly. */
    private Session as(String user) {
        Session s = new Session((code, command, session) -> daemon.handle(code, command, session),
                new Session.Peer(user, user, 1001, 1001, 0));
        s.attach((frame, force) -> true);
        s.onCommand(Frame.of(1, Code.INIT.value(), Session.VERSION));
        return s;
    }

    private static Frame query(long tid) {
        return Frame.of(tid, Code.QUERY.value(), "{}");
    }

    private List<String> holders(Frame state) throws Exception {
        List<String> out = new ArrayList<>();
        for (JsonNode i : JSON.readTree(state.text(0)).path("maps").path("nic").path("instances")) {
            out.add(i.path("holder").asText());
        }
        return out;
    }

    @Test
    void queryOfEachUser_isKeptForThatUserOnly_andDroppedByEveryChange() throws Exception {
        try (TestClient c = root()) {
            c.call(start(2, "7", "alice"));
            c.call(start(3, "8", "bob"));
            Session alice = as("alice");
            Session bob = as("bob");
            assertThat(daemon.quick(Code.QUERY, query(2), alice)).as("nothing kept before the first QUERY").isNull();
            Frame aliceView = daemon.handle(Code.QUERY, query(2), alice).get(0);
            assertThat(holders(aliceView)).containsExactly("7", Views.OTHER);
            assertThat(daemon.quick(Code.QUERY, query(3), alice)).containsExactly(
                    Frame.of(3, Code.STATE.value(), aliceView.text(0)));
            assertThat(daemon.quick(Code.QUERY, query(3), bob)).as("alice's view is never bob's").isNull();
            Frame bobView = daemon.handle(Code.QUERY, Frame.of(4, Code.QUERY.value()), bob).get(0);
            assertThat(holders(bobView)).containsExactly(Views.OTHER, "8");
            assertThat(holders(daemon.quick(Code.QUERY, query(5), bob).get(0))).containsExactly(Views.OTHER, "8");
            assertThat(daemon.quick(Code.QUERY, Frame.of(6, Code.QUERY.value(), "{\"job\":\"8\"}"), bob))
                    .as("a QUERY with arguments is built each time").isNull();

            c.call(Frame.of(4, Code.JOB_END.value(), "{\"job\":\"7\"}"));
            assertThat(daemon.quick(Code.QUERY, query(7), alice)).as("after JOB_END").isNull();
            assertThat(daemon.quick(Code.QUERY, query(7), bob)).as("after JOB_END").isNull();
            assertThat(holders(daemon.handle(Code.QUERY, query(7), alice).get(0))).containsExactly("", Views.OTHER);
        }
    }

    @Test
    void queryOfTheWholeState_whileAnotherCommandHoldsTheLock_isAnsweredOverTheSocket() throws Exception {
        try (TestClient c = root(); TestClient stuck = root()) {
            c.call(start(2, "7", "alice"));
            String kept = c.call(query(3)).get(0).text(0); // built under the lock, and kept
            // The stall: the daemon's lock held, as by a command that waits in its handler.
            java.lang.reflect.Field f = Daemon.class.getDeclaredField("lock");
            f.setAccessible(true);
            try (AutoCloseable held = holding(f.get(daemon))) {
                stuck.send(start(2, "8", "bob").encode()); // waits for the lock on a worker
                List<Frame> got = CompletableFuture.supplyAsync(() -> {
                    try (TestClient other = root()) {
                        return other.call(query(2));
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }).get(5, TimeUnit.SECONDS);
                assertThat(got).containsExactly(Frame.of(2, Code.STATE.value(), kept), Session.ok(2));
            }
            assertThat(stuck.untilDone(2)).last().isEqualTo(Session.ok(2));
            assertThat(JSON.readTree(c.call(query(4)).get(0).text(0)).path("jobs")).hasSize(2);
        }
    }

    @Test
    void queryOfAHostWithAnAuthority_isNeverKept_andNeverWaitsForTheLinksLock() throws Exception {
        Config linked = TestDaemon.config(tmp.resolve("linked"), "nic=2(ib0 ib1)", "socket = linked.sock",
                "authority = 127.0.0.1:" + rsmap.wire.Ports.free(), "reconcile_interval = 0"); // nobody listens
        Daemon host = TestDaemon.start(linked, AuthorityTest.TOKENS);
        try {
            Session root = new Session((code, command, session) -> host.handle(code, command, session),
                    new Session.Peer("root", "root", 0, 0, 0));
            root.attach((frame, force) -> true);
            root.onCommand(Frame.of(1, Code.INIT.value(), Session.VERSION));
            host.handle(Code.QUERY, query(2), root);
            java.lang.reflect.Field f = Daemon.class.getDeclaredField("global");
            f.setAccessible(true);
            try (AutoCloseable held = holding(f.get(host))) { // the link busy with its authority
                assertThat(CompletableFuture.supplyAsync(() -> host.quick(Code.QUERY, query(3), root))
                        .get(5, TimeUnit.SECONDS)).as("the link's part of the answer is never kept").isNull();
            }
        } finally {
            host.close();
        }
    }

    /** Holds {@code monitor} on a thread of its own until closed: the lock a command is stuck behind. */
    private static AutoCloseable holding(Object monitor) throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            synchronized (monitor) {
                held.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        holder.start();
        assertThat(held.await(5, TimeUnit.SECONDS)).isTrue();
        return () -> {
            release.countDown();
            holder.join();
        };
    }
}
