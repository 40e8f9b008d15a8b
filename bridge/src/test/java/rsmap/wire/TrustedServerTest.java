// The rsmap command's trust rule: daemon_user as rsmapd reads rsmapd.conf, and which
// configuration files may say it. The same vectors as the hooks' (HookTrustIT runs them through rsmap-hook).
package rsmap.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TrustedServerTest {
    @TempDir
    Path tmp;

    /** rsmapd.conf's text, ~ a backslash, ^ a line feed, % a carriage return. */
    private static String text(String row) {
        return row.replace('~', '\\').replace('^', '\n').replace('%', '\r');
    }

    /** Text | daemon_user, "-" when unset. Continuations are joined before comments are cut (rsmap.Continuation). */
    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            complexes = x                                      | -
            daemon_user = rsmap                                | rsmap
            DAEMON_USER=rsmap#the daemon's account             | rsmap
            `  daemon_user   =   rsmap   %`                    | rsmap
            `# daemon_user = rsmap`                            | -
            `# a comment ~^daemon_user = rsmap`                | -
            `complex_values = gpu=2(a ~^daemon_user = rsmap)`  | -
            `complex_values = gpu=2(a ~%^daemon_user = rsmap)` | -
            `a = b ~~^daemon_user = rsmap`                     | -
            `x = 1~^^daemon_user = rsmap`                      | rsmap
            `daemon_user = rs~^map`                            | rsmap
            `x = 1~`                                           | -
            """)
    void daemonUser_asRsmapdReadsIt(String row, String expected) {
        assertThat(TrustedServer.daemonUser(text(row))).isEqualTo(expected.equals("-") ? Optional.empty()
                : Optional.of(expected));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            `daemon_user = a^daemon_user = b`
            `daemon_user =`
            `daemon_user = # none`
            """)
    void daemonUser_twiceOrEmpty_isRefused(String row) {
        assertThatThrownBy(() -> TrustedServer.daemonUser(text(row)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("sets daemon_user twice, empty or too long");
    }

    private static boolean root() {
        return new com.sun.security.auth.module.UnixSystem().getUid() == 0;
    }

    @Test
    void refusal_rootAlways_ownUserOnlyWithoutAnInstalledConfiguration() throws Exception {
        Path socket = Path.of("/run/x.sock");
        TrustedServer none = new TrustedServer(tmp.resolve("absent.conf"), 1000);
        assertThat(none.refusal(socket, 0)).isEmpty();
        assertThat(none.refusal(socket, 1000)).as("the tour: one user runs everything").isEmpty();
        assertThat(none.refusal(socket, 65534)).contains("not trusting the server at /run/x.sock: it runs as uid 65534, "
                + "not as root or as this process's user (uid 1000; no " + tmp.resolve("absent.conf") + " installed)");
        Assumptions.assumeTrue(root(), "files of root's need root");
        Path conf = Files.writeString(tmp.resolve("rsmapd.conf"), "complexes = x\n");
        TrustedServer installed = new TrustedServer(conf, 1000);
        assertThat(installed.refusal(socket, 1000)).as("installed: the own user is nobody special")
                .contains("not trusting the server at /run/x.sock: it runs as uid 1000, not as root or daemon_user 'root' of "
                        + conf);
        Files.writeString(conf, "daemon_user = nobody\n");
        assertThat(installed.refusal(socket, 65534)).isEmpty();
        Files.writeString(conf, "daemon_user = no-such-user-here\n");
        assertThat(installed.refusal(socket, 65534)).contains("not trusting the server at /run/x.sock (uid 65534): "
                + "daemon_user 'no-such-user-here' of " + conf + " is not in /etc/passwd");
    }

    @Test
    void refusal_configurationOthersMayWrite_cannotSayAnything() throws Exception {
        Assumptions.assumeTrue(root(), "files of root's need root");
        Path conf = Files.writeString(tmp.resolve("rsmapd.conf"), "daemon_user = nobody\n");
        TrustedServer t = new TrustedServer(conf, 0);
        Path socket = Path.of("/s");
        Files.setPosixFilePermissions(conf, PosixFilePermissions.fromString("rw-rw-r--"));
        assertThat(t.refusal(socket, 65534)).contains("not trusting the server at /s (uid 65534): " + conf
                + " cannot say who may serve: it is writable by group or others");
        Files.setPosixFilePermissions(conf, PosixFilePermissions.fromString("rw-r--r--"));
        Files.setAttribute(conf, "unix:uid", 65534);
        assertThat(t.refusal(socket, 65534)).contains("not trusting the server at /s (uid 65534): " + conf
                + " cannot say who may serve: it is not owned by root");
        assertThat(t.refusal(socket, 0)).as("root needs no configuration").isEmpty();
        Path dir = Files.createDirectory(tmp.resolve("dir.conf"));
        assertThat(new TrustedServer(dir, 0).refusal(socket, 65534)).contains("not trusting the server at /s (uid 65534): "
                + dir + " cannot say who may serve: it is not a regular file");
    }
}
