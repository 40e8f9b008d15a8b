// rsmap check-jobspec and check-r: exit 0 with the canonical JSON, or exit 2 with one error line
// naming the file, the line and column, and the JSON path of the problem.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.cli.MainTest.run;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckFluxFormatsTest {
    @TempDir
    static Path tmp;

    static Path file(String name, String text) throws IOException {
        return Files.writeString(tmp.resolve(name), text, StandardCharsets.UTF_8);
    }

    static final String JOBSPEC = """
            version: 1
            resources:
              - type: node
                count: 1
                with:
                  - type: slot
                    count: 1
                    label: default
                    with:
                      - type: core
                        count: 2
                      - type: gpu
                        count: 2
            tasks:
              - command: [ "app" ]
                slot: default
                count:
                  per_slot: 1
            attributes:
              system:
                duration: 60
            """;

    @Test
    void checkJobspec_validYaml_printsCanonicalJson() throws IOException {
        MainTest.Run r = run("check-jobspec", file("ok.yaml", JOBSPEC).toString());
        assertThat(r.err()).isEmpty();
        assertThat(r.code()).isZero();
        assertThat(r.out()).isEqualTo("{\"version\":1,\"resources\":[{\"type\":\"node\",\"count\":1,\"with\":[{\"type\":"
                + "\"slot\",\"count\":1,\"label\":\"default\",\"with\":[{\"type\":\"core\",\"count\":2},{\"type\":\"gpu\","
                + "\"count\":2}]}]}],\"tasks\":[{\"command\":[\"app\"],\"slot\":\"default\",\"count\":{\"per_slot\":1}}],"
                + "\"attributes\":{\"system\":{\"duration\":60}}}\n");
        MainTest.Run again = run("check-jobspec", file("again.json", r.out()).toString());
        assertThat(again.out()).isEqualTo(r.out());
    }

    @Test
    void checkJobspec_badCount_exitsTwoNamingTheJsonPath() throws IOException {
        Path bad = file("bad.yaml", JOBSPEC.replaceFirst("count: 2", "count: 0")); // the core's
        MainTest.Run r = run("check-jobspec", bad.toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).isEqualTo("error: " + bad + ": line 11, column 13: $.resources[0].with[0].with[0].count: "
                + "count must be >= 1, not 0\n");
    }

    @Test
    void checkJobspec_version999_isUnsupported() throws IOException {
        MainTest.Run r = run("check-jobspec", file("v999.yaml", JOBSPEC.replace("version: 1", "version: 999")).toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("$.version: jobspec version 999 is not supported");
    }

    static final String R = "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"19-22\",\"children\":"
            + "{\"core\":\"0-47\",\"gpu\":\"0-7\"}}],\"nodelist\":[\"node186\",\"node[187-189]\"],\"nslots\":32,"
            + "\"starttime\":1676560542,\"expiration\":1676562342}}";

    @Test
    void checkR_valid_printsCanonicalJson() throws IOException {
        MainTest.Run r = run("check-r", file("r.json", R).toString());
        assertThat(r.err()).isEmpty();
        assertThat(r.code()).isZero();
        assertThat(r.out()).isEqualTo(R.replace("[\"node186\",\"node[187-189]\"]", "[\"node[186-189]\"]") + "\n");
    }

    @Test
    void checkR_badIdset_exitsTwoWithOneLineNamingThePath() throws IOException {
        Path bad = file("bad.json", R.replace("\"0-47\"", "\"0-047\""));
        MainTest.Run r = run("check-r", bad.toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("error: " + bad + ": line 1, column ")
                .contains("$.execution.R_lite[0].children.core: not an idset (RFC 22): column 3: leading zero");
        assertThat(r.err().strip()).doesNotContain("\n");
    }

    @Test
    void checkR_notJsonOrMissingFile_isRefused() throws IOException {
        assertThat(run("check-r", file("junk", "{\"version\":1,").toString()).err()).startsWith("error: ")
                .contains("not JSON");
        MainTest.Run missing = run("check-r", tmp.resolve("nope").toString());
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err()).endsWith("nope: no such file\n");
    }
}
