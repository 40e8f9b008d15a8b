// ReallocRequest and InstanceNames: the daemon's and rsmap simulate's one reader of a realloc's and a
// release's fields. Form faults are refused by read, content faults by resolve.
package rsmap.realloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.Fixtures;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Grant;
import rsmap.map.ComplexValues;

class ReallocRequestTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String R_GPU_1 = "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\",\"children\":"
            + "{\"core\":\"\",\"gpu\":\"1\"}}],\"nodelist\":[\"node01\"]}}";
    private static final String SPEC = "{\"version\":1,\"resources\":[{\"type\":\"slot\",\"count\":2,\"label\":\"task\","
            + "\"with\":[{\"type\":\"core\",\"count\":1},{\"type\":\"gpu\",\"count\":1}]}],\"tasks\":[{\"command\":[\"app\"],"
            + "\"slot\":\"task\",\"count\":{\"per_slot\":1}}],\"attributes\":{\"system\":{\"duration\":0}}}";

    /** Each row: the fields, then what the realloc reads as (add, sub, ids), or the refusal. */
    static Stream<Arguments> reallocs() {
        return Stream.of(
                // docs/realloc.md, Semantics: "add", "sub", optionally the exact instances in "ids"
                Arguments.of("{\"add\":\"gpu=1\"}", "gpu=1", "", Grant.NONE),
                Arguments.of("{\"sub\":\"gpu=1\",\"ids\":{\"node01\":{\"gpu\":[\"b\",\"c\"]}}}", "", "gpu=1",
                        ids("b", "c")),
                // "RFC 51 jobspec forms": spec_add reads as gpu=<count x slots>
                Arguments.of("{\"spec_add\":" + SPEC + "}", "gpu=2", "", Grant.NONE),
                // the R form of the instances to take away, alone and as what sub chooses from
                Arguments.of("{\"R\":" + R_GPU_1 + "}", "", "", ids("b")),
                Arguments.of("{\"sub\":\"gpu=1\",\"R\":" + JSON.valueToTree(R_GPU_1) + "}", "", "gpu=1", ids("b")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("reallocs")
    void parse_validFields_readAsTheRealloc(String fields, String add, String sub, Grant ids) throws Exception {
        Realloc r = ReallocRequest.parse(JSON.readTree(fields), "7", "t", cluster(), Limits.DEFAULT);
        assertThat(r.job()).isEqualTo("7");
        assertThat(r.tag()).isEqualTo("t");
        assertThat(r.add().map(Object::toString).orElse("")).isEqualTo(add);
        assertThat(r.sub().map(Object::toString).orElse("")).isEqualTo(sub);
        assertThat(r.ids()).isEqualTo(ids);
    }

    /** Each row: the fields and the problem read refuses them with (a malformed command). */
    static Stream<Arguments> malformed() {
        return Stream.of(
                Arguments.of("{}", "realloc needs 'add', 'sub', 'spec_add', 'spec_sub', 'ids' or 'R'"),
                Arguments.of("{\"job\":\"7\"}", "realloc needs 'add', 'sub', 'spec_add', 'spec_sub', 'ids' or 'R'"),
                Arguments.of("{\"add\":\"gpu=1\",\"spec_add\":" + SPEC + "}",
                        "realloc takes 'add' or 'spec_add', 'sub' or 'spec_sub', not both"),
                Arguments.of("{\"sub\":\"gpu=1\",\"spec_sub\":\"x\"}",
                        "realloc takes 'add' or 'spec_add', 'sub' or 'spec_sub', not both"),
                Arguments.of("{\"ids\":{\"node01\":{\"gpu\":[\"0\"]}},\"R\":" + R_GPU_1 + "}",
                        "give the instances as 'ids' or as 'R', not both"),
                Arguments.of("{\"add\":7}", "'add' must be a string"),
                Arguments.of("{\"add\":null}", "'add' must be a string"),
                Arguments.of("{\"sub\":\"\"}", "'sub' is empty"),
                Arguments.of("{\"spec_add\":[]}", "'spec_add' must be a jobspec: a JSON object, or a string of JSON or YAML"),
                Arguments.of("{\"R\":5}", "'R' must be an R version 1: a JSON object, or a string of JSON or YAML"),
                Arguments.of("{\"R\":\" \"}", "'R' must be an R version 1"),
                Arguments.of("{\"ids\":{}}", "'ids' must be an object of host to map to a list of identifiers"),
                Arguments.of("{\"ids\":{\"node01\":{\"gpu\":[1]}}}", "'ids' must be an object of host to map"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void read_wrongForm_refused(String fields, String problem) throws Exception {
        JsonNode n = JSON.readTree(fields);
        ParseException e = catchThrowableOfType(ParseException.class, () -> ReallocRequest.read(n));
        assertThat(e).as(fields).isNotNull();
        assertThat(e.problem()).startsWith(problem);
    }

    /** Each row: fields of the right form whose content resolve refuses (a DENY), and the problem. */
    static Stream<Arguments> denied() {
        return Stream.of(
                Arguments.of("{\"add\":\"gpu=1[\"}", "'[' without a matching ']'"),
                Arguments.of("{\"spec_add\":{\"version\":2}}", "spec_add: $.version: jobspec version 2 is not supported"),
                Arguments.of("{\"R\":{\"version\":1}}", "R: $.execution: required, but missing"),
                Arguments.of("{\"R\":" + R_GPU_1.replace("node01", "node09") + "}",
                        "R: $.execution.nodelist: host node09 (rank 0) is not configured"),
                Arguments.of("{\"R\":" + R_GPU_1.replace("\"gpu\":\"1\"", "\"gpu\":\"\"") + "}",
                        "R: $.execution.R_lite: names no resource-map instance"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("denied")
    void resolve_contentThatDoesNotFit_refused(String fields, String problem) throws Exception {
        ReallocRequest read = ReallocRequest.read(JSON.readTree(fields));
        Cluster c = cluster();
        ParseException e = catchThrowableOfType(ParseException.class,
                () -> read.resolve("7", "t", c, Limits.DEFAULT));
        assertThat(e).as(fields).isNotNull();
        assertThat(e.problem()).startsWith(problem);
        // a jobspec's or R's problem names its JSON path (the daemon shows it as it is), the language's its column
        assertThat(e.atPath()).as(fields).isEqualTo(problem.startsWith("spec_") || problem.startsWith("R: "));
    }

    @Test
    void instanceNames_release_readsIdsOrR() throws Exception {
        Cluster c = cluster();
        assertThat(InstanceNames.read(JSON.readTree("{\"job\":\"7\"}")).isEmpty()).isTrue();
        assertThat(InstanceNames.read(JSON.readTree("{\"ids\":{\"node01\":{\"gpu\":[\"b\"]}}}")).resolve(c, Limits.DEFAULT))
                .isEqualTo(ids("b"));
        assertThat(InstanceNames.read(JSON.readTree("{\"R\":" + R_GPU_1 + "}")).resolve(c, Limits.DEFAULT))
                .isEqualTo(ids("b"));
    }

    @Test
    void fields_areTheMembersRead() {
        assertThat(ReallocRequest.FIELDS).containsExactlyInAnyOrder("add", "sub", "spec_add", "spec_sub", "ids", "R");
    }

    private static Grant ids(String... ids) {
        return new Grant(Map.of("node01", Map.of("gpu", List.of(ids))));
    }

    private static Cluster cluster() throws ParseException {
        Cluster c = new Cluster(Fixtures.TABLE);
        c.configure("node01", ComplexValues.parse("gpu=4(a b c d)", Fixtures.TABLE), 0);
        return c;
    }
}
