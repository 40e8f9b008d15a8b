// rsmap discover's MIG listing against the stand-in NVML (docs/gpus.md, "Partitions on demand"): the card's
// mode, profiles with placements, the slices that exist, and the mig_map entry rsmapd would build.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.cli.MainTest.run;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.GpuStub;
import rsmap.daemon.MigStub;

class DiscoverMigTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;

    private MainTest.Run discover(String... more) throws Exception {
        Path state = tmp.resolve("state.json");
        Files.writeString(state, "{\"instances\":[{\"gpu\":\"" + MigStub.UUID + "\",\"profile\":\"3g.40gb\",\"placement\":4,"
                + "\"gi\":2,\"ci\":0,\"uuid\":\"MIG-static\"}]}");
        GpuStub.use(tmp.resolve("nvml.json"), MigStub.description(state, ""));
        Path conf = Files.writeString(tmp.resolve("rsmapd.conf"), "complexes = complexes\ngpu_dev_dir = " + tmp
                + "\nmig_map = mig\n");
        Files.writeString(tmp.resolve("complexes"), Files.readString(Path.of("..", "examples", "complexes")));
        MigStub.declare(tmp.resolve("complexes"));
        String[] args = new String[more.length + 5];
        System.arraycopy(new String[] {"discover", "--config", conf.toString(), "--nvml-library",
            GpuStub.LIBRARY.toString()}, 0, args, 0, 5);
        System.arraycopy(more, 0, args, 5, more.length);
        return run(args);
    }

    @Test
    void json_listsModeProfilesPlacementsAndSlices() throws Exception {
        MainTest.Run r = discover("--json");
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode mig = JSON.readTree(r.out()).path("mig").get(0);
        assertThat(mig.path("mode").asText()).isEqualTo("enabled");
        assertThat(mig.path("profiles")).hasSize(5);
        assertThat(mig.path("profiles").get(2).toString()).isEqualTo("{\"name\":\"3g.40gb\",\"slices\":3,\"memory\":"
                + "\"40192M\",\"placements\":[{\"start\":0,\"size\":4},{\"start\":4,\"size\":4}]}");
        assertThat(mig.path("instances").toString()).isEqualTo("[{\"profile\":\"3g.40gb\",\"gi\":2,\"placement\":4,"
                + "\"ci\":0,\"uuid\":\"MIG-static\"}]");
        assertThat(JSON.readTree(r.out()).path("mig_complex_values").asText()).startsWith("mig=14(0:1g.10gb@6[")
                .contains(" 0:7g.80gb@0[");
    }

    @Test
    void text_listsTheCardAndTheEntry() throws Exception {
        MainTest.Run r = discover();
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("gpu 0  MIG enabled\n").contains("  profile 2g.20gb    2 slices  19968M  placements"
                + " [0+2, 2+2, 4+2]\n").contains("  slice gi 2 ci 0  3g.40gb at 4+4  MIG-static\n")
                .contains("# the complex_values entry rsmapd builds (mig_map = mig):\nmig=14(");
    }
}
