// docs/containers.md, "The device name" and "What a spec holds": job device names that the CDI project's
// rules accept and that never collide; device nodes with type, number and the devices= mode; JSON that the
// CDI project's own schema accepts.
package rsmap.cdi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.map.Instance;

class CdiSpecTest {
    @TempDir
    Path tmp;

    static List<Instance> instances(String values) throws Exception {
        ComplexTable table = ComplexTable.parse(Files.readString(Path.of("..", "examples", "complexes")));
        return ComplexValues.parse(values, table).resourceMaps().get(0).instances();
    }

    @Test
    void classAndNameChecks_acceptWhatTheCdiPatternsAccept_onRandomText() {
        Pattern cls = Pattern.compile("[A-Za-z]([A-Za-z0-9_-]*[A-Za-z0-9])?");
        Pattern name = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?");
        String alphabet = "aZ09_.:-+/ \u00e9\u0660";
        long seed = System.nanoTime();
        Random r = new Random(seed);
        for (int i = 0; i < 20_000; i++) {
            StringBuilder b = new StringBuilder();
            for (int n = r.nextInt(8); n > 0; n--) {
                b.append(alphabet.charAt(r.nextInt(alphabet.length())));
            }
            String s = b.toString();
            assertThat(CdiSpec.isClass(s)).as("seed %d, class '%s'", seed, s).isEqualTo(cls.matcher(s).matches());
            assertThat(CdiSpec.isName(s)).as("seed %d, name '%s'", seed, s).isEqualTo(name.matcher(s).matches());
        }
    }

    @Test
    void jobDeviceName_table_isTheJobIdMadeCdiValid() {
        String[][] rows = {
            {"4711", "", "4711"}, // a Grid Engine job number, no array task
            {"4711", "3", "4711.3"}, // task 3 of array job 4711 (JOB.TASK, as the journal names it)
            {"a+b", "", "a:b"}, // '+' is no CDI name character: ':' is, and no job id holds one
            {"-x", "", "x.-x"}, // a CDI name begins with a letter or digit
            {"x_", "", "x_.x"}, // ... and ends with one
            {"_", "7", "x._.7"},
        };
        for (String[] r : rows) {
            String name = CdiSpec.jobDeviceName(r[0], r[1]);
            assertThat(name).as(r[0] + "." + r[1]).isEqualTo(r[2]);
            assertThat(CdiSpec.nameProblem(name)).as(name).isEmpty();
        }
    }

    @Test
    void jobDeviceName_property_validAndNeverShared() {
        long seed = System.nanoTime();
        Random r = new Random(seed);
        String chars = "AZaz09_+-";
        Map<String, String> seen = new HashMap<>();
        for (int i = 0; i < 20_000; i++) {
            StringBuilder job = new StringBuilder();
            for (int n = 1 + r.nextInt(4); n > 0; n--) {
                job.append(chars.charAt(r.nextInt(chars.length())));
            }
            String task = r.nextBoolean() ? "" : Integer.toString(r.nextInt(20));
            String id = job + (task.isEmpty() ? "" : "." + task);
            String name = CdiSpec.jobDeviceName(job.toString(), task);
            assertThat(CdiSpec.nameProblem(name)).as("seed " + seed + ": " + id).isEmpty();
            String other = seen.putIfAbsent(name, id);
            assertThat(other == null || other.equals(id)).as("seed " + seed + ": " + id + " and " + other + " share "
                    + name).isTrue();
        }
    }

    @Test
    void nodes_areEachListedPathOnce_withItsNumberAndWidestMode_andMissingPathsApart() throws Exception {
        // /dev/null is c 1:3 and /dev/zero c 1:5 on every Linux.
        List<Instance> inst = instances("gpu=3(g0[devices=/dev/null:rw;/dev/zero:r] g1[devices=/dev/zero:w] "
                + "g2[devices=" + tmp.resolve("gone") + ":rw])");
        CdiSpec.Nodes n = CdiSpec.nodes(inst);
        assertThat(n.found()).extracting(r -> r.path() + " " + r.cgroupV1())
                .containsExactly("/dev/null c 1:3 rw", "/dev/zero c 1:5 rw");
        assertThat(n.missing()).containsExactly(tmp.resolve("gone").toString());
        assertThat(CdiSpec.nodes(List.of(inst.get(1))).found()).extracting(r -> r.mode().toString()).containsExactly("w");
    }

    @Test
    void json_isVersion050_withDeviceNodesAndEnv_andTheSchemaAcceptsIt() throws Exception {
        CdiSchema.assumePresent();
        List<Instance> inst = instances("gpu=2(g0[devices=/dev/null:rw] g1[devices=/dev/zero:r])");
        CdiSpec spec = new CdiSpec("rsmap.io/job", List.of(new CdiSpec.Device("4711.3", CdiSpec.nodes(inst).found(),
                List.of("SGE_HGR_gpu=g0 g1"))));
        assertThat(new ObjectMapper().readTree(spec.text())).isEqualTo(new ObjectMapper().readTree(
                "{\"cdiVersion\":\"0.5.0\",\"kind\":\"rsmap.io/job\",\"devices\":[{\"name\":\"4711.3\","
                + "\"containerEdits\":{\"env\":[\"SGE_HGR_gpu=g0 g1\"],\"deviceNodes\":["
                + "{\"path\":\"/dev/null\",\"type\":\"c\",\"major\":1,\"minor\":3,\"permissions\":\"rw\"},"
                + "{\"path\":\"/dev/zero\",\"type\":\"c\",\"major\":1,\"minor\":5,\"permissions\":\"r\"}]}}]}"));
        Path f = Files.writeString(tmp.resolve("spec.json"), spec.text());
        Path empty = Files.writeString(tmp.resolve("empty.json"), new CdiSpec("rsmap.io/gpu", List.of(
                new CdiSpec.Device("0", List.of(), List.of()))).text());
        CdiSchema.assertValid(List.of(f, empty));
        // The validator is real: a spec without its version is refused.
        Path broken = Files.writeString(tmp.resolve("broken.json"), spec.text().replace("\"cdiVersion\"", "\"version\""));
        assertThat(CdiSchema.errors(List.of(broken))).contains("'cdiVersion' is a required property");
    }

    @Test
    void names_thatCdiRefuses_areRefusedHere() {
        assertThat(CdiSpec.classProblem("gpu")).isEmpty();
        assertThat(CdiSpec.classProblem("gpu_")).get().asString().contains("no CDI class");
        assertThat(CdiSpec.classProblem("_gpu")).isPresent();
        assertThat(CdiSpec.nameProblem("GPU-0b3f")).isEmpty();
        assertThat(CdiSpec.nameProblem("a/b")).get().asString().contains("no CDI device name");
        assertThatThrownBy(() -> new CdiSpec("nvidia.com/gpu", List.of())).hasMessageContaining("rsmap.io");
        assertThatThrownBy(() -> new CdiSpec.Device("-0", List.of(), List.of())).hasMessageContaining("-0");
    }
}
