// Flux's own jobspec and R test data (../shared/flux-testdata, see its README) as a conformance suite:
// every valid file is accepted and re-encodes, every invalid one is refused naming a JSON path.
package rsmap.flux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import rsmap.ParseException;

class FluxTestDataTest {
    /** The repository's sibling shared/ folder: /work/shared beside /work/main, and so in CI. */
    static final Path DATA = Path.of("..", "..", "shared", "flux-testdata").toAbsolutePath().normalize();

    /**
     * The version-1 files outside valid_v1/ (jobspec/valid/, rfc/spec_14/, rfc/spec_25/): RFC 25 decides
     * each; an empty row means accept, otherwise the path the refusal must name and why.
     */
    static final Map<String, String[]> VERSION_1 = Map.ofEntries(
            Map.entry("jobspec/valid/example1.yaml", accept()),
            Map.entry("jobspec/valid/basic_v1.yaml", refuse("$.tasks[0].slot",
                    "RFC 14: the task's slot 'foo' SHALL match a slot label, and the slot is labelled 'task'")),
            Map.entry("jobspec/valid/example2.yaml", refuse("$.resources[0].with[0].type",
                    "RFC 25: slot>node is none of slot>core, node>slot>core, slot>(core,gpu), node>slot>(core,gpu)")),
            Map.entry("jobspec/valid/use_case_1.9.yaml", refuse("$.resources",
                    "RFC 25: the resources list MUST contain exactly one element (here ssd and node)")),
            Map.entry("jobspec/valid/use_case_1.10.yaml", refuse("$.resources[0].type",
                    "RFC 25: the one top-level vertex MUST be node or slot (here rack)")),
            Map.entry("jobspec/valid/use_case_1.11.yaml", refuse("$.resources[0].with[1].type",
                    "RFC 25: a slot holds core and gpu, never a node")),
            Map.entry("rfc/spec_14/example1.yaml", accept()),
            Map.entry("rfc/spec_14/example2.yaml", refuse("$.resources[0].with[0].type",
                    "RFC 25: slot>node is not a version-1 graph")),
            Map.entry("rfc/spec_25/example1.yaml", accept()),
            Map.entry("rfc/spec_25/use_case_1.1.yaml", accept()),
            Map.entry("rfc/spec_25/use_case_2.1.yaml", accept()),
            Map.entry("rfc/spec_25/use_case_2.2.yaml", accept()),
            Map.entry("rfc/spec_25/use_case_2.3.yaml", accept()),
            Map.entry("rfc/spec_25/use_case_2.4.yaml", accept()));

    /** invalid_v1/: the JSON path each refusal names (flux-core's t/jobspec/invalid_v1). */
    static final Map<String, String> INVALID_V1 = Map.ofEntries(
            Map.entry("core_count_invalid.yaml", "$.resources[0].with[0].with[0].count"),
            Map.entry("duration_missing.yaml", "$.attributes.system.duration"),
            Map.entry("gpu_count_invalid.yaml", "$.resources[0].with[0].with[1].count"),
            Map.entry("node_vertex_missing_count.yaml", "$.resources[0].count"),
            Map.entry("node_vertex_with_notarray.yaml", "$.resources[0].with[0].with"),
            Map.entry("node_vertex_with_toomany.yaml", "$.resources[0].with"),
            Map.entry("node_vertex_zero_count.yaml", "$.resources[0].count"),
            Map.entry("res_type_unknown.yaml", "$.resources[0].type"),
            Map.entry("slot_node.yaml", "$.resources[0].with[0].type"),
            Map.entry("task_count_per_resource.yaml", "$.tasks[0].count.per_resource"),
            Map.entry("version_wrong.yaml", "$.version"),
            Map.entry("with_toomany.yaml", "$.resources[0].with"),
            Map.entry("with_whatnow.yaml", "$.resources[0].with[1].type"));

    static final List<String> R_VALID = List.of("1node_1core.R", "1node_4core.R", "4node_1core.R", "4node_4core.R",
            "missing_starttime.R", "missing_expiration.R");
    static final Map<String, String> R_INVALID = Map.of(
            "invalid_R_lite.R", "$.execution.R_lite",
            "invalid_json.R", "",
            "invalid_nodelist.R", "$.execution.nodelist",
            "invalid_version.R", "$.version",
            "missing_R_lite.R", "$.execution.R_lite",
            "missing_nodelist.R", "",
            "missing_version.R", "$.version");

    private static String[] accept() {
        return new String[0];
    }

    private static String[] refuse(String path, String why) {
        return new String[] {path, why};
    }

    @BeforeAll
    static void dataIsThere() {
        if (!Files.isDirectory(DATA)) {
            String why = DATA + " is missing: the shared/ folder belongs beside the repository";
            if ("true".equals(System.getenv("CI"))) {
                fail(why);
            }
            Assumptions.abort(why);
        }
    }

    static List<Path> files(String folder, String suffix) throws IOException {
        try (Stream<Path> s = Files.list(DATA.resolve(folder))) {
            return s.filter(p -> p.toString().endsWith(suffix)).sorted().toList();
        }
    }

    static String read(Path p) throws IOException {
        return Files.readString(p, StandardCharsets.UTF_8);
    }

    @Test
    void jobspecValidV1_everyFile_isAcceptedAndReencodes() throws Exception {
        List<Path> files = files("jobspec/valid_v1", ".yaml");
        assertThat(files).hasSize(7);
        for (Path f : files) {
            Jobspec j = parseOrFail(f);
            assertThat(Jobspec.parse(j.toString())).as(f.toString()).isEqualTo(j);
            assertThat(Jobspec.parse(j.toString()).toString()).isEqualTo(j.toString());
        }
    }

    @Test
    void jobspecInvalidV1_everyFile_isRefusedNamingItsPath() throws IOException {
        List<Path> files = files("jobspec/invalid_v1", ".yaml");
        assertThat(files).hasSize(INVALID_V1.size());
        for (Path f : files) {
            String path = INVALID_V1.get(f.getFileName().toString());
            assertThat(path).as("a table row for " + f).isNotNull();
            refused(f, path);
        }
    }

    /** README: version 999 is refused as unsupported; version 1 as the table says, and why. */
    @Test
    void jobspecValidAndRfcExamples_byVersion_followTheTable() throws Exception {
        Set<String> seen = new HashSet<>();
        List<Path> all = new ArrayList<>(files("jobspec/valid", ".yaml"));
        all.addAll(files("rfc/spec_14", ".yaml"));
        all.addAll(files("rfc/spec_25", ".yaml"));
        for (Path f : all) {
            String key = DATA.relativize(f).toString();
            String text = read(f);
            if (text.contains("version: 999")) {
                ParseException e = refused(f, "$.version");
                assertThat(e.problem()).contains("version 999 is not supported");
                continue;
            }
            assertThat(VERSION_1).as("a table row for the version-1 file " + key).containsKey(key);
            seen.add(key);
            String[] expected = VERSION_1.get(key);
            if (expected.length == 0) {
                Jobspec j = parseOrFail(f);
                assertThat(Jobspec.parse(j.toString())).isEqualTo(j);
            } else {
                refused(f, expected[0]);
            }
        }
        assertThat(seen).containsExactlyInAnyOrderElementsOf(VERSION_1.keySet());
    }

    @Test
    void r_validFiles_areAcceptedAndReencode() throws Exception {
        List<Path> valid = new ArrayList<>();
        for (String name : R_VALID) {
            valid.add(DATA.resolve("R").resolve(name));
        }
        valid.add(DATA.resolve("rfc/spec_20/example1.json"));
        for (Path f : valid) {
            R r;
            try {
                r = R.parse(read(f));
            } catch (ParseException e) {
                throw new AssertionError(f + " refused: " + e.getMessage(), e);
            }
            assertThat(R.parse(r.toString())).as(f.toString()).isEqualTo(r);
            assertThat(R.parse(r.toString()).toString()).isEqualTo(r.toString());
        }
        R example = R.parse(read(DATA.resolve("rfc/spec_20/example1.json")));
        assertThat(example.toString()).isEqualTo("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"19-22\","
                + "\"children\":{\"core\":\"0-47\",\"gpu\":\"0-7\"}}],\"nodelist\":[\"node[186-189]\"],\"nslots\":32,"
                + "\"starttime\":1676560542,\"expiration\":1676562342}}");
        assertThat(example.hosts()).containsEntry(19L, "node186").containsEntry(22L, "node189");
    }

    @Test
    void r_invalidFiles_areRefused() throws IOException {
        List<Path> files = files("R", ".R");
        assertThat(files).hasSize(R_VALID.size() + R_INVALID.size());
        for (Path f : files) {
            String name = f.getFileName().toString();
            if (R_VALID.contains(name)) {
                continue;
            }
            assertThat(R_INVALID).as("a table row for " + name).containsKey(name);
            String path = R_INVALID.get(name);
            try {
                R.parse(read(f));
                fail(f + " was accepted");
            } catch (ParseException e) {
                if (!path.isEmpty()) {
                    assertThat(e.problem()).as(f.toString()).startsWith(path + ": ");
                }
            }
        }
    }

    private static Jobspec parseOrFail(Path f) throws IOException {
        try {
            return Jobspec.parse(read(f));
        } catch (ParseException e) {
            throw new AssertionError(f + " refused: " + e.getMessage() + "\n" + e.caretLine(), e);
        }
    }

    private static ParseException refused(Path f, String path) throws IOException {
        try {
            Jobspec j = Jobspec.parse(read(f));
            throw new AssertionError(f + " was accepted: " + j);
        } catch (ParseException e) {
            assertThat(e.problem()).as(f + ": " + e.getMessage()).startsWith(path + ": ");
            return e;
        }
    }
}
