// rsmapd.conf: settings, defaults, continuation lines, and errors with file line and reason.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import rsmap.ParseException;
import rsmap.device.Isolation;

class ConfigTest {
    static final Path FILE = Path.of("/etc/rsmap/rsmapd.conf");

    @Test
    void parse_fullFile_readsEverySetting() throws ParseException {
        Config c = Config.parse(String.join("\n",
                "# rsmapd on node01",
                "complexes = complexes",
                "complex_values = gpu=2(gpu0[devices=/dev/nvidia0:rw] \\",
                "                       gpu1[devices=/dev/nvidia1:rw])   # two cards",
                "global_complex_values = lic=4(la lb lc ld)",
                "socket = /tmp/rsmapd.sock",
                "device_backend = dry-run",
                "isolation = optional",
                "max_frame = 65536",
                ""), FILE, "node99");
        assertThat(c.complexes()).isEqualTo(Path.of("/etc/rsmap/complexes"));
        assertThat(c.host()).isEqualTo("node99");
        assertThat(c.complexValues()).isEqualTo("gpu=2(gpu0[devices=/dev/nvidia0:rw]                        "
                + "gpu1[devices=/dev/nvidia1:rw])");
        assertThat(c.globalComplexValues()).isEqualTo("lic=4(la lb lc ld)");
        assertThat(c.socket()).isEqualTo(Path.of("/tmp/rsmapd.sock"));
        assertThat(c.deviceBackend()).isEqualTo("dry-run");
        assertThat(c.isolation()).isEqualTo(Isolation.Mode.OPTIONAL);
        assertThat(c.maxFrame()).isEqualTo(65536);
        assertThat(c.stateDir()).isEqualTo(Path.of("/var/lib/rsmap"));
        assertThat(c.reconcileInterval()).isEqualTo(60);
        assertThat(c.socketMode()).isEqualTo("rw-rw----");
        assertThat(c.lineOf("complex_values")).isEqualTo(3);
        assertThat(c.lineOf("device_backend")).isEqualTo(7);
        assertThat(c.lineOf("admin_user")).isZero();
    }

    @Test
    void complexValuesThatDoNotParse_stopTheDaemonAtStart_withFileLineAndReason(@org.junit.jupiter.api.io.TempDir Path tmp)
            throws Exception {
        Config c = TestDaemon.config(tmp, "gpu=2(0 \\\n    1 2)");
        Throwable t = catchThrowableOfType(() -> TestDaemon.start(c), java.io.IOException.class);
        assertThat(t).hasMessage(tmp.resolve("rsmapd.conf") + ": line 3: complex_values: column 5: amount 2 of 'gpu' does"
                + " not match the 3 instances listed");
        assertThat(tmp.resolve("state")).doesNotExist(); // nothing was touched
    }

    @Test
    void parse_minimalFile_takesTheDefaults() throws ParseException {
        Config c = Config.parse("complexes = /etc/rsmap/complexes\n", FILE, "node01");
        assertThat(c.deviceBackend()).isEqualTo("auto");
        assertThat(c.isolation()).isEqualTo(Isolation.Mode.REQUIRED);
        assertThat(c.socket()).isEqualTo(Path.of("/run/rsmap/rsmapd.sock"));
        assertThat(c.complexValues()).isEqualTo("NONE");
        assertThat(c.maxRsmapIds()).isEqualTo(512);
    }

    private static ParseException refused(String text) {
        return catchThrowableOfType(ParseException.class, () -> Config.parse(text, FILE, "n"));
    }

    @Test
    void socketMode_isOctal_ownerReadWrite_neverExecute() throws ParseException {
        assertThat(Config.parse("complexes = c\nsocket_mode = 0666\n", FILE, "n").socketMode()).isEqualTo("rw-rw-rw-");
        assertThat(Config.parse("complexes = c\nsocket_mode = 600\n", FILE, "n").socketMode()).isEqualTo("rw-------");
    }

    @Test
    void parse_errors_nameLineAndReason() {
        ParseException e = refused("complexes = c\nisolation = maybe\n");
        assertThat(e.lineAndColumn() + ": " + e.problem()).isEqualTo("line 2, column 1: isolation is required, optional "
                + "or off, not 'maybe'");
        assertThat(refused("complexes = c\nsockets = /x\n").problem()).startsWith("unknown setting 'sockets'");
        assertThat(refused("complexes = c\ncomplexes = d\n").problem()).isEqualTo("'complexes' is set twice");
        assertThat(refused("socket = /x\n").problem()).startsWith("'complexes' is missing");
        assertThat(refused("complexes = c\njust words\n").problem()).isEqualTo("expected 'key = value'");
        assertThat(refused("complexes = c\ndevice_backend = selinux\n").problem()).startsWith("device_backend is one of");
        assertThat(refused("complexes = c\nmax_frame = 10\n").problem()).startsWith("max_frame is a whole number from 64");
        assertThat(refused("complexes = c\nsocket_mode = 0777\n").problem()).startsWith("socket_mode is an octal mode");
        assertThat(refused("complexes = c\nsocket_mode = 0460\n").problem()).startsWith("socket_mode is an octal mode");
        ParseException cont = refused("complexes = c\ncomplex_values = a \\\nb\nbogus\n");
        assertThat(cont.line()).isEqualTo(4);
    }
}
