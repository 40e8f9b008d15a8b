// rsmap cdi-spec (docs/containers.md, "Static specs"): a spec per map whose instances list devices, kind
// rsmap.io/<map>, one device per instance id (shared ids once), valid against the CDI schema; a map whose
// name CDI cannot carry is one error line and exit 2.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.cdi.CdiSchema;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Config;
import rsmap.daemon.Daemon;

@Timeout(60)
class CdiSpecCommandTest {
    @TempDir
    Path tmp;
    Daemon daemon;

    private Path serve(String values, String complexes) throws Exception {
        Files.writeString(tmp.resolve("complexes"), complexes);
        Path conf = Files.writeString(tmp.resolve("rsmapd.conf"), String.join("\n", "complexes = complexes",
                "host = node01", "complex_values = " + values, "socket = s.sock", "state_dir = state",
                "device_backend = dry-run", "admin_user = " + System.getProperty("user.name"), "reconcile_interval = 0",
                "cdi_dir = cdi", ""));
        Config config = Config.parse(Files.readString(conf), conf, "node01");
        daemon = new Daemon(config, ComplexTable.parse(Files.readString(config.complexes())), conf).serve();
        return config.socket();
    }

    @AfterEach
    void stop() throws Exception {
        if (daemon != null) {
            daemon.close();
        }
    }

    @Test
    void cdiSpec_printsAStaticSpecPerMapWithDevices_oneDevicePerInstanceId() throws Exception {
        CdiSchema.assumePresent();
        Path socket = serve("gpu=4(0[devices=/dev/zero:rw] 0[devices=/dev/zero:rw] 1[devices=/dev/full:r;/dev/zero:r] "
                + "1[devices=/dev/full:r;/dev/zero:r]),nic=1(ib0)", Files.readString(MainTest.EXAMPLES.resolve("complexes")));
        MainTest.Run text = MainTest.run("cdi-spec", "--socket", socket.toString());
        assertThat(text.code()).as(text.err()).isZero();
        assertThat(text.out()).isEqualTo("rsmap.io/gpu=0  /dev/zero c 1:5 rw\n"
                + "rsmap.io/gpu=1  /dev/full c 1:7 r, /dev/zero c 1:5 r\n");
        MainTest.Run json = MainTest.run("cdi-spec", "--socket", socket.toString(), "--json");
        assertThat(json.code()).as(json.err()).isZero();
        JsonNode all = new ObjectMapper().readTree(json.out());
        assertThat(all.size()).as("nic lists no devices: no spec").isEqualTo(1);
        assertThat(all.get(0).path("kind").asText()).isEqualTo("rsmap.io/gpu");
        assertThat(all.get(0).path("cdiVersion").asText()).isEqualTo("0.5.0");
        Path f = Files.writeString(tmp.resolve("gpu.json"), all.get(0).toString());
        CdiSchema.assertValid(List.of(f));
    }

    @Test
    void cdiSpec_aMapNameCdiCannotCarry_isOneErrorLine_exit2() throws Exception {
        Path socket = serve("gpu_=1(0[devices=/dev/zero])", Files.readString(MainTest.EXAMPLES.resolve("complexes"))
                + "gpu_                gpu_       RSMAP       <=    YES         HOST       0        0\n");
        MainTest.Run r = MainTest.run("cdi-spec", "--socket", socket.toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("error: map 'gpu_' is no CDI class (a letter, then letters, digits, '_' or '-', "
                + "ending with a letter or digit): rename the map to have a CDI spec of it\n");
    }
}
