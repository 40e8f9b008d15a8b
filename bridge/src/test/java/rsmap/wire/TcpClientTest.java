// TCP beside the Unix socket, on real sockets: Client.connect over TCP with a credential, frames
// cut at every byte still decode, and the Unix socket of the same server serves as it always did.
package rsmap.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class TcpClientTest {
    static final Duration TIMEOUT = Duration.ofSeconds(5);

    @TempDir
    Path tmp;
    SocketServer server;

    @AfterEach
    void stop() throws IOException {
        if (server != null) {
            server.close();
        }
    }

    SocketServer start() throws IOException {
        server = SocketServer.builder(SocketServerTest::handler).unix(tmp.resolve("rsmapd.sock"), "", "rw-rw----")
                .tcp(TcpLoginTest.loopback(), TcpLoginTest::authenticate).limits(ServerLimits.defaults(4096)).start();
        return server;
    }

    @Test
    void client_overTcp_logsInWithACredentialPerConnect_andCallsSynchronously() throws Exception {
        start();
        AtomicInteger asked = new AtomicInteger();
        Supplier<String> credential = () -> {
            asked.incrementAndGet();
            return "good:alice";
        };
        try (Client c = Client.connect(server.tcpAddress(), credential, TIMEOUT)) {
            assertThat(c.call(Code.QUERY)).containsExactly(Frame.of(2, Code.STATE.value(), "{\"host\":\"node01\"}"));
            assertThat(c.call(Code.MODEL_DEF).get(0).args().stream().map(b -> new String(b, StandardCharsets.UTF_8)))
                    .containsExactly("alice", "hosts", "0", "1001");
            assertThatThrownBy(() -> c.call(Code.RELOAD)).isInstanceOf(Client.Refusal.class)
                    .hasMessage("RELOAD would remove instance 0 held by job 7");
            assertThat(c.call(Code.QUERY)).hasSize(1); // a refused command leaves the connection as it was
        }
        try (Client again = Client.connect(server.tcpAddress(), credential, TIMEOUT)) {
            assertThat(again.call(Code.QUERY)).hasSize(1);
        }
        assertThat(asked).as("a fresh credential for every connect (MUNGE's are good once)").hasValue(2);
    }

    /**
     * A command over the frame bound is never sent: the server would refuse it and close the connection.
     * The client says so in one line, and its connection serves the next command; one at the bound goes.
     */
    @Test
    void client_aCommandOverTheFrameBound_isNotSent_andTheConnectionServesOn() throws Exception {
        start(); // the server's bound: 4096 bytes
        try (Client c = Client.connect(server.path()).maxFrame(4096)) {
            String atBound = "x".repeat(4096 - Frame.of(1, Code.QUERY.value(), "").bodyLength() + 1 - 3);
            assertThat(Frame.of(1, Code.QUERY.value(), atBound).bodyLength()).isEqualTo(4096);
            assertThat(c.call(Code.QUERY, atBound)).as("at the bound: sent and answered").hasSize(1);
            assertThatThrownBy(() -> c.call(Code.QUERY, atBound + "x")).isInstanceOf(Client.Oversize.class)
                    .hasMessage("the argument of QUERY (4097 bytes framed) is over the protocol's 4096 bytes frame bound:"
                            + " not sent");
            assertThat(c.call(Code.QUERY)).as("the connection serves on").hasSize(1);
        }
        try (Client c = Client.connect(server.path())) { // the protocol's bound unless told otherwise
            assertThatThrownBy(() -> c.send(Code.QUERY, "y".repeat(FrameDecoder.DEFAULT_MAX_FRAME)))
                    .isInstanceOf(Client.Oversize.class).hasMessageEndingWith("over the protocol's 1 MiB frame bound: not sent");
            assertThat(c.call(Code.QUERY)).hasSize(1);
        }
    }

    @Test
    void client_refusedCredential_isARefusalWithTheServersReason() throws Exception {
        start();
        assertThatThrownBy(() -> Client.connect(server.tcpAddress(), () -> "forged", TIMEOUT))
                .isInstanceOf(Client.Refusal.class).hasMessage("credential invalid (forged, or another key)");
    }

    @Test
    void client_nothingListening_isAnIOExceptionNamingTheAddress() throws Exception {
        InetSocketAddress gone = new InetSocketAddress(InetAddress.getLoopbackAddress(), Ports.free());
        assertThatThrownBy(() -> Client.connect(gone, () -> "good:alice", TIMEOUT)).isInstanceOf(IOException.class)
                .hasMessageStartingWith("cannot reach rsmapd at " + gone);
    }

    @Test
    void client_aServerThatNeverAnswers_isATimeout_notAHang() throws Exception {
        try (ServerSocket mute = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) { // the kernel accepts
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> Client.connect((InetSocketAddress) mute.getLocalSocketAddress(), () -> "good:alice",
                    Duration.ofMillis(300))).isInstanceOf(SocketTimeoutException.class);
            assertThat((System.nanoTime() - t0) / 1_000_000).as("ms").isBetween(250L, 3000L);
        }
    }

    @Test
    void unixSocket_besideTcp_servesAsBefore_withTheKernelsPeer() throws Exception {
        start();
        try (Client unix = Client.connect(server.path());
             Client tcp = Client.connect(server.tcpAddress(), () -> "good:bob", TIMEOUT)) {
            List<String> peer = new ArrayList<>();
            unix.call(Code.MODEL_DEF).get(0).args().forEach(b -> peer.add(new String(b, StandardCharsets.UTF_8)));
            assertThat(peer.get(0)).isEqualTo(System.getProperty("user.name"));
            assertThat(peer.get(2)).as(PeerCredentials.UNAVAILABLE).isEqualTo(Long.toString(ProcessHandle.current().pid()));
            assertThat(tcp.call(Code.MODEL_DEF).get(0).text(0)).isEqualTo("bob");
        }
        try (TestClient c = new TestClient(server.path())) { // on the Unix socket a refused first command is not fatal
            assertThat(c.call(Frame.of(3, Code.QUERY.value()))).containsExactly(Session.error(3, "INIT must come first", Category.MALFORMED));
            assertThat(c.call(TcpLoginTest.init(4, "1"))).containsExactly(Session.ok(4));
            assertThat(c.call(Frame.of(5, Code.QUERY.value()))).hasSize(2);
        }
    }

    @Test
    void framesCutAtEveryByte_overTcp_stillDecode_andABadFrameDoesNotSpoilTheNext() throws Exception {
        start();
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        stream.writeBytes(TcpLoginTest.init(1, "1", "good:alice").encode());
        stream.writeBytes("0000000e0000002a0012 x".getBytes(StandardCharsets.US_ASCII)); // no HEXLEN: prefix
        stream.writeBytes(Frame.of(2, Code.QUERY.value()).encode());
        byte[] all = stream.toByteArray();
        for (int cut = 1; cut < all.length; cut++) {
            try (TestClient c = new TestClient(server.tcpAddress())) {
                c.send(Arrays.copyOf(all, cut));
                Thread.sleep(2); // TCP_NODELAY: the cut leaves as its own segment, and is read apart
                c.send(Arrays.copyOfRange(all, cut, all.length));
                expectAnswers(c, "cut at " + cut);
            }
        }
        try (TestClient c = new TestClient(server.tcpAddress())) {
            for (byte b : all) {
                c.send(new byte[] {b});
            }
            expectAnswers(c, "a byte at a time");
        }
    }

    private static void expectAnswers(TestClient c, String how) throws Exception {
        assertThat(c.untilDone(1)).as(how).containsExactly(Session.ok(1));
        assertThat(c.untilDone(42)).as(how).singleElement()
                .satisfies(f -> assertThat(f.text(0)).contains("has no HEXLEN: prefix"));
        assertThat(c.untilDone(2)).as(how).containsExactly(Frame.of(2, Code.STATE.value(), "{\"host\":\"node01\"}"),
                Session.ok(2));
    }

    @Test
    void builder_needsASocket_andAServerOnOneSideSaysSoOfTheOther() throws Exception {
        assertThatThrownBy(() -> SocketServer.builder(SocketServerTest::handler).start())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("needs a Unix socket, a TCP address");
        server = SocketServer.builder(SocketServerTest::handler).tcp(TcpLoginTest.loopback(), TcpLoginTest::authenticate)
                .start();
        assertThatThrownBy(server::path).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("this server listens on TCP only, at ");
        try (SocketServer unix = new SocketServer(tmp.resolve("u.sock"), SocketServerTest::handler, 4096)) {
            assertThatThrownBy(unix::tcpAddress).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("this server listens on its Unix socket only, at ");
        }
    }
}
