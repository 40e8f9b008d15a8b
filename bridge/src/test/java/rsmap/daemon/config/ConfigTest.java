// rsmapd.conf: settings, defaults, continuation lines, and errors with file line and reason.
package rsmap.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import rsmap.ParseException;
import rsmap.daemon.TestDaemon;
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
        assertThat(refused("complexes = c\nrealloc_max_grow = gpu=-1\n").problem())
                .isEqualTo("realloc_max_grow: 'gpu=-1' is not N, start or MAP=N|start (N from 0 to 999999)");
        ParseException cont = refused("complexes = c\ncomplex_values = a \\\nb\nbogus\n");
        assertThat(cont.line()).isEqualTo(4);
    }

    /** node filters and alternatives's keys: attributes, attribute_types, slots, filter, discover, and their defaults. */
    @Test
    void nodeAttributeKeys_areRead_andDeclaredTypesGoOverTheDiscoveredOnes() throws ParseException {
        Config c = Config.parse(String.join("\n", "complexes = c",
                "attribute_types = fabric:string, kernel:string, gpu_arch:version",
                "attributes = cpu_speed=2.4GHz, fabric=hdr,gpu_arch=9.0 , big = true",
                "slots = 48",
                "filter = arch != \"ppc64le\" && cpu_speed>2GHz",
                "discover = off", ""), FILE, "n");
        assertThat(c.attributes()).containsExactly(java.util.Map.entry("cpu_speed", "2.4GHz"),
                java.util.Map.entry("fabric", "hdr"), java.util.Map.entry("gpu_arch", "9.0"), java.util.Map.entry("big",
                        "true"));
        assertThat(c.attributeTypes().toString()).isEqualTo("{\"arch\":\"string\",\"cpu_speed\":\"number\","
                + "\"cpus\":\"number\",\"cuda\":\"version\",\"fabric\":\"string\",\"gpu_arch\":\"version\","
                + "\"gpu_memory\":\"number\",\"gpu_model\":\"string\",\"gpus\":\"number\",\"kernel\":\"string\","
                + "\"memory\":\"number\",\"nvidia_driver\":\"version\",\"os\":\"string\"}");
        assertThat(c.slots()).hasValue(48);
        assertThat(c.filter().orElseThrow().toString()).isEqualTo("arch != \"ppc64le\" && cpu_speed > 2GHz");
        assertThat(c.discover()).isFalse();
        Config d = Config.parse("complexes = c\n", FILE, "n");
        assertThat(d.attributes()).isEmpty();
        assertThat(d.slots()).isEmpty(); // the daemon takes the discovered cpus
        assertThat(d.filter()).isEmpty();
        assertThat(d.discover()).isTrue();
        assertThat(d.attributeTypes().typeOf("kernel")).hasValue(rsmap.node.AttributeType.VERSION);
    }

    /** Each refusal of a new key: one line, the line and the column where the admin wrote the mistake. */
    @Test
    void nodeAttributeKeys_refusals_nameLineColumnAndReason() {
        String[][] rows = {
            {"attributes = cpu_speed", "line 2, column 14: attributes: expected name=value, found 'cpu_speed'"},
            {"attributes = a=1,,b=2", "line 2, column 18: attributes: expected name=value, found nothing"},
            {"attributes = a=", "line 2, column 16: attributes: 'a' has no value"},
            {"attributes = a=1, a=2", "line 2, column 19: attributes: 'a' is set twice"},
            {"attributes = 9x=1", "line 2, column 14: attributes: '9x' is not an attribute name (a letter or _, then "
                    + "letters, digits, _ . -)"},
            {"attributes = host=n1", "line 2, column 14: attributes: 'host' is reserved in filters and cannot name an "
                    + "attribute"},
            {"attributes = os=x, kernel=six", "line 2, column 27: attributes: attribute 'kernel' (version): "},
            {"attribute_types = a:colour", "line 2, column 21: attribute_types: unknown type 'colour' for 'a' (string, "
                    + "number, version or boolean)"},
            {"attribute_types = a", "line 2, column 19: attribute_types: expected name:type, found 'a'"},
            {"attribute_types = a:string,a:number", "line 2, column 28: attribute_types: 'a' is declared twice"},
            {"filter = cpu_speed >", "line 2, column 21: filter: "},
            {"filter = arch = \"x\"", "line 2, column 15: filter: '=' is not an operator; compare with =="},
            {"filter = kernel == \"6.5\"", "line 2, column 20: filter: 'kernel' is declared version"},
            {"slots = -1", "line 2, column 1: slots is a whole number from 0 to 1000000, not '-1'"},
            {"discover = maybe", "line 2, column 1: discover is on or off, not 'maybe'"},
        };
        for (String[] row : rows) {
            ParseException e = refused("complexes = c\n" + row[0] + "\n");
            assertThat(e).as(row[0]).isNotNull();
            assertThat(e.lineAndColumn() + ": " + e.problem()).as(row[0]).startsWith(row[1]).doesNotContain("\n");
        }
    }

    @Test
    void anAuthority_refusesTheHostsAttributes_butTakesTypesAndTheAdminLimit() throws ParseException {
        String authority = "complexes = c\nrole = authority\nlisten = 127.0.0.1:7321\n";
        for (String hostOnly : new String[] {"attributes = a=1", "slots = 4", "discover = off"}) {
            ParseException e = refused(authority + hostOnly + "\n");
            assertThat(e.lineAndColumn() + ": " + e.problem()).as(hostOnly).startsWith("line 4, column 1: "
                    + hostOnly.substring(0, hostOnly.indexOf(' ')) + " is an execution host's setting");
        }
        Config c = Config.parse(authority + "attribute_types = fabric:string\nfilter = fabric == \"hdr\"\n", FILE, "n");
        assertThat(c.filter()).isPresent();
    }

    /** docs/cluster.md, "Active and standby": a host's authorities in order, an authority's takeover_timeout. */
    @Test
    void standbyKeys_table_parseOrRefuseWithLineAndReason() throws ParseException {
        String host = "complexes = c\n";
        String authority = "complexes = c\nrole = authority\nlisten = 127.0.0.1:7321\n";
        Config two = Config.parse(host + "authority = node00:7321, node01:7321\n", FILE, "n");
        assertThat(two.authority().toString()).isEqualTo("node00:7321,node01:7321");
        assertThat(Config.parse(host + "authority = [::1]:7321\n", FILE, "n").authority().endpoints()).hasSize(1);
        assertThat(Config.parse(authority, FILE, "n").takeoverTimeout()).as("the documented default").isEqualTo(10);
        assertThat(Config.parse(authority + "takeover_timeout = 2\n", FILE, "n").takeoverTimeout()).isEqualTo(2);
        String[][] rows = {
            {host + "authority = node00:7321,,node01:7321\n", "line 2, column 1: authority: 'node00:7321,,node01:7321'"
                    + " has an empty entry"},
            {host + "authority = node00:7321,node00:7321\n", "line 2, column 1: authority: an authority is named twice"},
            {host + "authority = node00:7321,node01\n", "line 2, column 1: authority: 'node01' is not HOST:PORT"},
            {host + "takeover_timeout = 5\n", "line 2, column 1: takeover_timeout is an authority's setting"},
            {authority + "takeover_timeout = 0\n", "line 4, column 1: takeover_timeout is a whole number from 1 to 3600"},
            {authority + "takeover_timeout = 1.5\n", "line 4, column 1: takeover_timeout is a whole number"},
        };
        for (String[] row : rows) {
            ParseException e = refused(row[0]);
            assertThat(e).as(row[0]).isNotNull();
            assertThat(e.lineAndColumn() + ": " + e.problem()).as(row[0]).startsWith(row[1]).doesNotContain("\n");
        }
    }
}
