// Logging in over TCP on real sockets on 127.0.0.1: INIT VERSION CREDENTIAL, the Authenticator's
// peer as the session's, and every other first frame answered by one ERROR and the connection closed.
package rsmap.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(60)
class TcpLoginTest {
    /** Hosts' daemon users as a fake credential service knows them: {@code good:NAME} proves NAME. */
    static final Map<String, Long> UIDS = Map.of("root", 0L, "rsmap", 990L, "alice", 1001L, "bob", 1002L);

    /** The seam of rsmap.munge: {@code good:NAME} for a user of {@link #UIDS}; anything else is refused. */
    static Session.Peer authenticate(String credential) throws Authenticator.Refused {
        Long uid = credential.startsWith("good:") ? UIDS.get(credential.substring(5)) : null;
        if (uid == null) {
            throw new Authenticator.Refused("credential invalid (forged, or another key)");
        }
        return new Session.Peer(credential.substring(5), "hosts", uid, 100, 0);
    }

    static InetSocketAddress loopback() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }

    static Frame init(long tid, String... args) {
        return Frame.of(tid, Code.INIT.value(), args);
    }

    SocketServer server;
    final List<String> loginThreads = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() throws IOException {
        if (server != null) {
            server.close();
        }
    }

    SocketServer start(Authenticator authenticator) throws IOException {
        server = SocketServer.builder(SocketServerTest::handler).tcp(loopback(), authenticator)
                .limits(ServerLimits.defaults(4096)).start();
        return server;
    }

    SocketServer start() throws IOException {
        return start(credential -> {
            loginThreads.add(Thread.currentThread().getName());
            return authenticate(credential);
        });
    }

    TestClient connect() throws IOException {
        return new TestClient(server.tcpAddress());
    }

    @Test
    void init_acceptedCredential_commandsRun_andThePeerIsTheAuthenticatorsOne() throws Exception {
        start();
        assertThat(server.tcpAddress().getPort()).as("port 0 asked: an ephemeral one bound").isPositive();
        try (TestClient c = connect()) {
            assertThat(c.call(init(1, "1", "good:alice"))).containsExactly(Session.ok(1));
            assertThat(c.call(Frame.of(2, Code.QUERY.value()))).containsExactly(
                    Frame.of(2, Code.STATE.value(), "{\"host\":\"node01\"}"), Session.ok(2));
            // MODEL_DEF of the test handler: the session's peer, user group pid uid
            assertThat(c.call(Frame.of(3, Code.MODEL_DEF.value()))).containsExactly(
                    Frame.of(3, Code.STATE.value(), "alice", "hosts", "0", "1001"), Session.ok(3));
            assertThat(c.call(init(4, "1", "good:bob"))).as("one login per connection")
                    .containsExactly(Session.error(4, "INIT was already received", Category.MALFORMED));
            assertThat(c.call(Frame.of(5, Code.MODEL_DEF.value())).get(0).text(0)).isEqualTo("alice");
        }
        assertThat(loginThreads).as("the login runs on a worker, never on the selector thread")
                .singleElement().satisfies(t -> assertThat(t).startsWith("rsmapd-worker-"));
    }

    /**
     * INIT arguments | the ERROR | logins refused (counted): every row ends the connection ("a
     * refused or missing credential is an ERROR naming why, and the connection is closed").
     */
    static Stream<Arguments> refusedInits() {
        String form = "INIT over TCP carries the protocol version and a credential (INIT 1 CREDENTIAL); ";
        return Stream.of(
                Arguments.of(new String[] {"1", "forged"}, "credential invalid (forged, or another key)", 1, Category.DENIED),
                Arguments.of(new String[] {"1", "good:mallory"}, "credential invalid (forged, or another key)", 1, Category.DENIED),
                Arguments.of(new String[] {"1"}, form + "none was given", 0, Category.MALFORMED),
                Arguments.of(new String[] {"1", ""}, form + "none was given", 0, Category.MALFORMED),
                Arguments.of(new String[] {"1", "good:alice", "x"}, form + "it had 3 arguments", 0, Category.MALFORMED),
                Arguments.of(new String[] {}, "protocol version (none) is not supported; rsmapd speaks version 1", 0, Category.MALFORMED),
                Arguments.of(new String[] {"2", "good:alice"}, "protocol version 2 is not supported; rsmapd speaks"
                        + " version 1", 0, Category.MALFORMED));
    }

    @ParameterizedTest
    @MethodSource("refusedInits")
    void init_refusedOrMissingCredential_isOneErrorWithTheReason_andTheConnectionCloses(String[] args, String why,
            int refused, Category category) throws Exception {
        start();
        try (TestClient c = connect()) {
            assertThat(c.call(init(7, args))).containsExactly(Session.error(7, why, category));
            assertThat(ServerBudgetTest.closed(c)).isTrue();
        }
        assertThat(server.counters().refused()).isEqualTo(refused);
    }

    /** The first frame | its TID | the ERROR's start: before an accepted INIT nothing runs, and the connection goes. */
    static Stream<Arguments> framesBeforeInit() {
        String first = "INIT with a credential must come first";
        return Stream.of(
                Arguments.of(Frame.of(3, Code.QUERY.value()).toString(), 3, first),
                Arguments.of(Frame.of(4, Code.QUIT.value()).toString(), 4, first),
                Arguments.of(Frame.of(5, 0x7777).toString(), 5, "unknown command code 7777"),
                // delimited, but its argument has no HEXLEN: prefix (on a logged-in session the next frame is served)
                Arguments.of("0000000e0000002a0012 x", 0x2a, "bad frame: "));
    }

    @ParameterizedTest
    @MethodSource("framesBeforeInit")
    void anythingBeforeInit_isOneError_andTheConnectionCloses(String first, long tid, String why) throws Exception {
        start();
        try (TestClient c = connect()) {
            c.send(first.getBytes(StandardCharsets.US_ASCII));
            Frame got = c.next();
            assertThat(got.tid()).isEqualTo(tid);
            assertThat(got.code()).isEqualTo(Code.ERROR.value());
            assertThat(got.text(0)).startsWith(why);
            assertThat(ServerBudgetTest.closed(c)).isTrue();
        }
        assertThat(loginThreads).as("no credential was ever looked at").isEmpty();
    }

    @Test
    void authenticatorThatThrows_refuses_neverLetsIn() throws Exception {
        start(credential -> {
            throw new IllegalStateException("munged went away");
        });
        try (TestClient c = connect()) {
            assertThat(c.call(init(1, "1", "good:root"))).containsExactly(Session.error(1,
                    "the credential could not be checked: java.lang.IllegalStateException: munged went away", Category.INTERNAL));
            assertThat(ServerBudgetTest.closed(c)).isTrue();
        }
    }

    @Test
    void authenticatorThatNamesNoOne_refuses() throws Exception {
        start(credential -> Session.Peer.UNKNOWN);
        try (TestClient c = connect()) {
            assertThat(c.call(init(1, "1", "good:root"))).containsExactly(Session.error(1,
                    "the credential could not be checked: it names no one", Category.INTERNAL));
            assertThat(ServerBudgetTest.closed(c)).isTrue();
        }
    }

    @Test
    void aSlowLogin_doesNotHoldUpTheCommandsOfAnotherConnection() throws Exception {
        start(credential -> {
            if (credential.equals("good:bob")) {
                ServerBudgetTest.sleep(1500); // a credential service that takes its time
            }
            return authenticate(credential);
        });
        try (TestClient alice = connect(); TestClient bob = connect()) {
            assertThat(alice.call(init(1, "1", "good:alice"))).containsExactly(Session.ok(1));
            bob.send(init(1, "1", "good:bob").encode());
            Thread.sleep(100); // the thing tested: bob's slow login under way while alice asks
            long t0 = System.nanoTime();
            assertThat(alice.call(Frame.of(2, Code.QUERY.value()))).hasSize(2);
            assertThat((System.nanoTime() - t0) / 1_000_000).as("ms").isLessThan(1000);
            assertThat(bob.untilDone(1)).containsExactly(Session.ok(1));
        }
    }
}
