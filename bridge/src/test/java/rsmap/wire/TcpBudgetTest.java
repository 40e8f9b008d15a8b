// The budget over TCP, on real sockets on 127.0.0.1: a connection must log in within the login
// timeout, at most maxUnauthenticated may wait for theirs, and privilege and the per-user limit are judged
// on the peer a login proved.
package rsmap.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class TcpBudgetTest {
    SocketServer server;
    /** Every peer the privileged predicate was asked about. */
    final List<Session.Peer> judged = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() throws IOException {
        if (server != null) {
            server.close();
        }
    }

    SocketServer start(ServerLimits limits, Authenticator authenticator, Predicate<Session.Peer> privileged)
            throws IOException {
        server = SocketServer.builder(SocketServerTest::handler).tcp(TcpLoginTest.loopback(), authenticator)
                .limits(limits).privileged(p -> {
                    judged.add(p);
                    return privileged.test(p);
                }).start();
        return server;
    }

    SocketServer start(ServerLimits limits) throws IOException {
        return start(limits, TcpLoginTest::authenticate, Session.Peer::isRoot);
    }

    TestClient connect() throws IOException {
        return new TestClient(server.tcpAddress());
    }

    TestClient loggedIn(String user) throws Exception {
        TestClient c = connect();
        assertThat(c.call(TcpLoginTest.init(1, "1", "good:" + user))).containsExactly(Session.ok(1));
        return c;
    }

    @Test
    void loginTimeout_aSilentConnectionAndOneThatNeverFinishesItsInit_areClosed() throws Exception {
        start(ServerLimits.defaults(4096).withLoginTimeout(Duration.ofMillis(300)));
        try (TestClient silent = connect(); TestClient half = connect(); TestClient in = loggedIn("alice")) {
            byte[] init = TcpLoginTest.init(1, "1", "good:bob").encode();
            half.send(java.util.Arrays.copyOf(init, init.length - 1));
            long t0 = System.nanoTime();
            Frame bye = silent.next();
            long waited = (System.nanoTime() - t0) / 1_000_000;
            assertThat(bye).isEqualTo(Session.error(0, "not logged in within 0.3 s of the connect: the connection is"
                    + " closed", Category.BUSY));
            assertThat(silent.next()).isNull();
            assertThat(waited).isBetween(150L, 2000L);
            assertThat(half.next().text(0)).startsWith("not logged in within 0.3 s");
            assertThat(ServerBudgetTest.closed(half)).isTrue();
            Thread.sleep(300); // the thing tested: past the login timeout, a logged-in connection stays
            assertThat(in.call(Frame.of(2, Code.QUERY.value()))).as("a login beats the timeout for good").hasSize(2);
        }
        assertThat(server.counters().timedOut()).isEqualTo(2);
    }

    @Test
    void oneSourceAddress_holdsAtMostASixteenthOfTheLoginPlaces_andOtherAddressesAndLoggedInHostsAreServed()
            throws Exception {
        start(ServerLimits.defaults(4096)); // 1,024 places, 64 per address
        java.net.InetAddress one = java.net.InetAddress.getByName("127.0.0.1");
        java.net.InetAddress other = java.net.InetAddress.getByName("127.0.0.2");
        List<TestClient> flood = new ArrayList<>();
        try (TestClient in = loggedIn("alice")) {
            for (int i = 0; i < 64; i++) {
                flood.add(new TestClient(server.tcpAddress(), one));
            }
            try (TestClient over = new TestClient(server.tcpAddress(), one)) {
                assertThat(over.next()).isEqualTo(Session.error(0, "too many connections from 127.0.0.1 have not logged"
                        + " in yet: the limit is 64 per address; try again later", Category.BUSY));
            }
            try (TestClient host = new TestClient(server.tcpAddress(), other)) {
                assertThat(host.call(TcpLoginTest.init(1, "1", "good:root"))).containsExactly(Session.ok(1));
                assertThat(host.call(Frame.of(2, Code.QUERY.value()))).hasSize(2);
            }
            assertThat(in.call(Frame.of(2, Code.QUERY.value()))).as("logged in before the flood").hasSize(2);
            // one of the flood logs in: its place is given back, and the address may wait with one more
            assertThat(flood.get(0).call(TcpLoginTest.init(1, "1", "good:bob"))).containsExactly(Session.ok(1));
            try (TestClient again = new TestClient(server.tcpAddress(), one)) {
                assertThat(again.call(TcpLoginTest.init(1, "1", "good:root"))).containsExactly(Session.ok(1));
            }
        } finally {
            for (TestClient c : flood) {
                c.close();
            }
        }
    }

    @Test
    void maxUnauthenticated_theNextConnectIsRefusedAtOnce_andLoginsAndTimeoutsGiveTheirPlacesBack() throws Exception {
        start(ServerLimits.defaults(4096).withMaxUnauthenticated(3).withLoginTimeout(Duration.ofMillis(1500)));
        List<TestClient> waiting = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            waiting.add(connect());
        }
        try (TestClient over = connect()) {
            assertThat(over.next()).isEqualTo(Session.error(0, "too many connections have not logged in yet: the"
                    + " limit is 3; try again later", Category.BUSY));
            assertThat(over.next()).as("closed after its ERROR").isNull();
        }
        // A login gives its place back before its OK: the next connect waits for its login again.
        assertThat(waiting.get(0).call(TcpLoginTest.init(1, "1", "good:alice"))).containsExactly(Session.ok(1));
        // So does a refused one.
        assertThat(waiting.get(1).call(TcpLoginTest.init(1, "1", "forged")).get(0).code()).isEqualTo(Code.ERROR.value());
        try (TestClient a = loggedIn("bob"); TestClient b = loggedIn("bob")) {
            assertThat(a.call(Frame.of(2, Code.QUERY.value()))).hasSize(2);
            // and the timeout: waiting[2] is closed at 1.5 s, then a fourth may wait beside two others
            try (TestClient w1 = connect(); TestClient w2 = connect()) {
                assertThat(waiting.get(2).next().text(0)).startsWith("not logged in within 1.5 s");
                assertThat(ServerBudgetTest.closed(waiting.get(2))).as("closed once its place was given back").isTrue();
                try (TestClient w3 = connect()) {
                    assertThat(w3.call(TcpLoginTest.init(1, "1", "good:root"))).containsExactly(Session.ok(1));
                }
            }
        }
        for (TestClient c : waiting) {
            c.close();
        }
        assertThat(server.counters().refused()).as("the connect over the limit, and the forged login").isEqualTo(2);
    }

    @Test
    void perUserLimit_countsTheAuthenticatedUser_privilegedPeersAreExempt() throws Exception {
        start(ServerLimits.defaults(4096).withPerUserConnections(2));
        List<TestClient> held = new ArrayList<>();
        held.add(loggedIn("alice"));
        held.add(loggedIn("alice"));
        try (TestClient third = connect()) {
            assertThat(third.call(TcpLoginTest.init(1, "1", "good:alice"))).containsExactly(Session.error(1,
                    "too many connections of user 'alice' (uid 1001): the limit is 2 per user", Category.BUSY));
            assertThat(ServerBudgetTest.closed(third)).isTrue();
        }
        held.add(loggedIn("bob")); // another user's bucket
        for (int i = 0; i < 5; i++) {
            held.add(loggedIn("root")); // root is privileged: no limit
        }
        assertThat(judged).as("privilege is judged on the peer the credential proved, once per login")
                .extracting(Session.Peer::user).containsExactly("alice", "alice", "alice", "bob", "root", "root", "root",
                        "root", "root");
        // One of alice's goes away: her place is free again, once the server saw it go.
        held.remove(0).close();
        TestClient again = Polls.retry(Duration.ofSeconds(5), () -> {
            TestClient c = connect();
            if (c.call(TcpLoginTest.init(1, "1", "good:alice")).equals(List.of(Session.ok(1)))) {
                return c;
            }
            c.close();
            return null;
        }, c -> c != null);
        assertThat(again).as("alice admitted again").isNotNull();
        held.add(again);
        for (TestClient c : held) {
            assertThat(c.call(Frame.of(2, Code.QUERY.value()))).hasSize(2);
            c.close();
        }
    }

    @Test
    void loginTimeout_whileTheCredentialIsChecked_closes_andTheLateLoginKeepsNothing() throws Exception {
        start(ServerLimits.defaults(4096).withPerUserConnections(1).withMaxUnauthenticated(1)
                .withLoginTimeout(Duration.ofMillis(300)), credential -> {
                    if (credential.endsWith("#slow")) {
                        ServerBudgetTest.sleep(1000);
                        credential = credential.substring(0, credential.length() - 5);
                    }
                    return TcpLoginTest.authenticate(credential);
                }, p -> false);
        try (TestClient slow = connect()) {
            slow.send(TcpLoginTest.init(1, "1", "good:alice#slow").encode());
            assertThat(slow.next().text(0)).startsWith("not logged in within 0.3 s");
            assertThat(ServerBudgetTest.closed(slow)).isTrue();
            // The place of the pending login is free at once, though its credential is still being checked.
            try (TestClient next = connect()) {
                assertThat(next.call(TcpLoginTest.init(1, "1", "good:bob"))).containsExactly(Session.ok(1));
            }
        }
        Thread.sleep(1000); // the thing tested: the slow check ends, on a connection that is gone: alice's place was not taken
        try (TestClient alice = loggedIn("alice")) {
            assertThat(alice.call(Frame.of(2, Code.MODEL_DEF.value())).get(0).text(0)).isEqualTo("alice");
        }
    }

    @Test
    void privilegedPeers_overTcp_areNeverShed() throws Exception {
        // 400 KiB held by root's half frame, 900 KiB by alice's: over the budget of 1200 KiB, alice goes.
        start(ServerLimits.defaults(1 << 20).withMaxBufferedInput(1200 << 10));
        try (TestClient root = loggedIn("root"); TestClient alice = loggedIn("alice")) {
            byte[] mine = Frame.of(7, Code.QUERY.value(), "x".repeat(600 << 10)).encode();
            root.send(java.util.Arrays.copyOf(mine, 400 << 10));
            Thread.sleep(200); // root's half frame is read and held before alice's comes: the order of the budget
            try {
                alice.send(java.util.Arrays.copyOf(Frame.of(8, Code.QUERY.value(), "x".repeat(1000 << 10)).encode(),
                        900 << 10));
            } catch (IOException e) {
                // shed while still sending
            }
            assertThat(alice.next().text(0)).startsWith("rsmapd holds more partial frames than its budget");
            root.send(java.util.Arrays.copyOfRange(mine, 400 << 10, mine.length));
            assertThat(root.untilDone(7)).hasSize(2);
        }
        assertThat(server.counters().shed()).isEqualTo(1);
    }
}
