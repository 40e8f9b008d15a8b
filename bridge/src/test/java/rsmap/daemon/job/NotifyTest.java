// sd_notify: READY=1 and STOPPING=1 reach a real datagram socket at a path and in the abstract namespace;
// addresses NOTIFY_SOCKET cannot hold are refused by name.
package rsmap.daemon.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.daemon.NotifyListener;

class NotifyTest {
    /** A guard against a hang, never a measurement: a Unix datagram is queued when sendto returns. */
    static final Duration GUARD = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    @Test
    void send_pathSocket_theDatagramArrivesAsSent() throws Exception {
        try (NotifyListener l = NotifyListener.bind(tmp.resolve("notify").toString())) {
            Notify n = Notify.fromEnvironment(Map.of("NOTIFY_SOCKET", l.address())).orElseThrow();
            n.send("READY=1");
            n.send("STOPPING=1");
            assertThat(l.receive(GUARD)).contains("READY=1");
            assertThat(l.receive(GUARD)).contains("STOPPING=1");
        }
    }

    @Test
    void send_abstractName_theDatagramArrives() throws Exception {
        String name = "@rsmap-notify-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        try (NotifyListener l = NotifyListener.bind(name)) {
            new Notify(name).send("READY=1");
            assertThat(l.receive(GUARD)).contains("READY=1");
        }
    }

    @Test
    void send_nobodyListens_isAnIOExceptionNamingTheSocket() {
        String gone = tmp.resolve("nobody").toString();
        assertThatThrownBy(() -> new Notify(gone).send("READY=1")).isInstanceOf(IOException.class)
                .hasMessageStartingWith("NOTIFY_SOCKET " + gone + ": ");
    }

    @Test
    void fromEnvironment_unsetOrEmpty_notifiesNobody() {
        assertThat(Notify.fromEnvironment(Map.of())).isEqualTo(Optional.empty());
        assertThat(Notify.fromEnvironment(Map.of("NOTIFY_SOCKET", ""))).isEqualTo(Optional.empty());
    }

    /** sd_notify(3): "an absolute path or ... '@' for the abstract namespace"; sun_path holds 108 bytes. */
    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of("run/notify", "NOTIFY_SOCKET is an absolute path or an @abstract name, not 'run/notify'"),
                Arguments.of("vsock:2:1234", "NOTIFY_SOCKET is an absolute path or an @abstract name, not 'vsock:2:1234'"),
                Arguments.of("@", "NOTIFY_SOCKET '@' names no socket"),
                Arguments.of("/", "NOTIFY_SOCKET '/' names no socket"),
                Arguments.of("/" + "x".repeat(107), "NOTIFY_SOCKET is longer than 108 bytes: '/" + "x".repeat(107) + "'"),
                Arguments.of("@a\0b", "NOTIFY_SOCKET contains a NUL"));
    }

    @ParameterizedTest
    @MethodSource("refused")
    void new_addressNotifySocketCannotHold_isRefusedWithTheReason(String address, String message) {
        assertThatThrownBy(() -> new Notify(address)).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    }

    @Test
    void sockaddr_longestPathAndAbstractName_fitSunPath() {
        assertThat(Notify.sockaddr("/" + "x".repeat(106))).hasSize(2 + 108);
        assertThat(Notify.sockaddr("@" + "x".repeat(107))).hasSize(2 + 108);
        byte[] a = Notify.sockaddr("@ab");
        assertThat(new byte[] {a[2], a[3], a[4]}).containsExactly(0, 'a', 'b');
    }
}
