// rsmapd.conf's cdi and cdi_dir (docs/containers.md, "Settings"): defaults, every value, and refusals
// naming the line and the key; an authority refuses both.
package rsmap.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import rsmap.ParseException;

class CdiSettingsTest {
    private static final Path FILE = Path.of("/etc/rsmap/rsmapd.conf");

    private static CdiSettings parse(String... lines) throws ParseException {
        return Config.parse("complexes = c\n" + String.join("\n", lines) + "\n", FILE, "n").cdi();
    }

    @Test
    void defaults_areOptionalInVarRunCdi() throws Exception {
        assertThat(parse()).isEqualTo(CdiSettings.defaults());
        assertThat(parse()).isEqualTo(new CdiSettings(CdiSettings.Mode.OPTIONAL, Path.of("/var/run/cdi")));
    }

    @Test
    void table_valuesAndRefusals() throws Exception {
        Object[][] rows = {
            {"cdi = off", new CdiSettings(CdiSettings.Mode.OFF, Path.of("/var/run/cdi"))},
            {"cdi = required", new CdiSettings(CdiSettings.Mode.REQUIRED, Path.of("/var/run/cdi"))},
            {"cdi_dir = /etc/cdi", new CdiSettings(CdiSettings.Mode.OPTIONAL, Path.of("/etc/cdi"))},
            {"cdi_dir = specs", new CdiSettings(CdiSettings.Mode.OPTIONAL, Path.of("/etc/rsmap/specs"))}, // the file's folder
            {"cdi = on", "line 2, column 1: cdi is off, optional or required, not 'on'"},
            {"cdi = Required", "cdi is off, optional or required, not 'Required'"},
        };
        for (Object[] r : rows) {
            if (r[1] instanceof CdiSettings expected) {
                assertThat(parse((String) r[0])).as((String) r[0]).isEqualTo(expected);
            } else {
                assertThatThrownBy(() -> parse((String) r[0])).as((String) r[0]).isInstanceOf(ParseException.class)
                        .hasMessageContaining((String) r[1]);
            }
        }
    }

    @Test
    void anAuthority_refusesTheCdiKeys() {
        for (String key : CdiSettings.KEYS) {
            assertThatThrownBy(() -> Config.parse("complexes = c\nrole = authority\nlisten = 127.0.0.1:7321\n" + key
                    + " = off\n", FILE, "n")).hasMessageContaining(key + " is an execution host's setting");
        }
    }
}
