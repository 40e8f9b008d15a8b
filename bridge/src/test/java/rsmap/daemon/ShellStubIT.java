// native-stubs' shell-stub, the Flux-style job shell of dynamic reallocation's tests, against a scripted stand-in for rsmapd
// (FakeDaemon): the RFC 51 jobspec and R files arrive verbatim as raw JSON, the ALLOC's JSON and type come back.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import rsmap.daemon.HookBuild.Run;
import rsmap.wire.Frame;
import rsmap.wire.Session;

class ShellStubIT {
    static final Path STUB = Path.of("..", "native-stubs", "target", "shell-stub").toAbsolutePath().normalize();
    /** A jobspec as a file holds it: indented, several lines, a trailing newline - sent byte for byte. */
    static final String SPEC = """
            {"version": 1,
             "resources": [{"type": "slot", "count": 1, "label": "task",
                            "with": [{"type": "core", "count": 1}, {"type": "gpu", "count": 2}]}],
             "tasks": [{"command": ["app"], "slot": "task", "count": {"per_slot": 1}}],
             "attributes": {"system": {"duration": 0}}}
            """;
    static final String SUB = "{\"version\":1,\"resources\":[{\"type\":\"slot\",\"count\":1,\"label\":\"task\",\"with\":"
            + "[{\"type\":\"core\",\"count\":1},{\"type\":\"gpu\",\"count\":1}]}],\"tasks\":[{\"command\":[\"app\"],"
            + "\"slot\":\"task\",\"count\":{\"per_slot\":1}}],\"attributes\":{\"system\":{\"duration\":0}}}";
    static final String R = "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\",\"children\":{\"core\":\"\",\"gpu\":\"1\"}}],"
            + "\"nodelist\":[\"node01\"],\"starttime\":0,\"expiration\":0}}";
    static final String ALLOC_JSON = "{\"job\":\"7\",\"tag\":\"t1\",\"alloc_id\":1,\"type\":0,\"added\":{\"node01\":{\"gpu\":[\"2\",\"3\"]}},"
            + "\"R_delta_add\":{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\",\"children\":{\"core\":\"\",\"gpu\":\"2-3\"}}],"
            + "\"nodelist\":[\"node01\"],\"starttime\":0,\"expiration\":0}},\"env\":{\"SGE_HGR_gpu\":\"0 1 2 3\"}}";

    @TempDir
    Path tmp;
    Path sock;
    Path spec;
    Path sub;
    Path r;

    @BeforeEach
    void files() throws Exception {
        assertThat(STUB).as("built by the native-stubs module").isExecutable();
        sock = tmp.resolve("fake.sock");
        spec = Files.writeString(tmp.resolve("spec.json"), SPEC);
        sub = Files.writeString(tmp.resolve("sub.json"), SUB);
        r = Files.writeString(tmp.resolve("R.json"), R);
    }

    static List<Frame> alloc(Frame c, String json, int type, String reason) {
        return List.of(Frame.of(c.tid(), RsmapShellIT.ALLOC, json, Integer.toString(type), reason, "SGE_HGR_gpu=0 1 2 3"),
                Session.ok(c.tid()));
    }

    Run stub(Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(STUB.toString()));
        cmd.addAll(List.of(args));
        Map<String, String> all = new HashMap<>(Map.of("RSMAP_SOCKET", sock.toString()));
        all.putAll(env);
        return HookBuild.exactly(null, cmd, all, 30);
    }

    /** The run, and the one command the fake received as "code json". */
    record Exchange(Run run, String sent) {
    }

    Exchange against(Function<Frame, List<Frame>> script, Map<String, String> env, String... args) throws Exception {
        try (FakeDaemon fake = new FakeDaemon(sock, script)) {
            Run run = stub(env, args);
            assertThat(fake.received).hasSizeLessThanOrEqualTo(1);
            return new Exchange(run, fake.received.isEmpty() ? "" : String.format("%04x %s", fake.received.get(0).code(),
                    fake.received.get(0).text(0)));
        }
    }

    @Test
    void realloc_specFilesVerbatim_printsTheAllocJsonAndType_exit0() throws Exception {
        Exchange e = against(c -> alloc(c, ALLOC_JSON, 0, ""), Map.of(), "realloc", "--spec-add", spec.toString(),
                "--spec-sub", sub.toString(), "--tag", "t1", "--job", "7");
        assertThat(e.run()).isEqualTo(new Run(0, ALLOC_JSON + "\ntype=0\n", ""));
        assertThat(e.sent()).isEqualTo("0015 {\"job\":\"7\",\"tag\":\"t1\",\"spec_add\":" + SPEC + ",\"spec_sub\":" + SUB + "}");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            1 | gpu: needs 2 free matching instances, 1 available
            2 | cancelled
            3 | reallocation is off
            """)
    void realloc_notSuccess_printsTheType_exit3(int type, String reason) throws Exception {
        String json = "{\"job\":\"7\",\"type\":" + type + ",\"error\":\"" + reason + "\"}";
        Exchange e = against(c -> alloc(c, json, type, reason), Map.of("JOB_ID", "7"), "realloc", "--spec-add", spec.toString());
        assertThat(e.run()).isEqualTo(new Run(3, json + "\ntype=" + type + "\n", ""));
    }

    /** The job as rsmap-shell finds it: JOB_ID (with a numbered SGE_TASK_ID), else SLURM_JOB_ID, --job over both. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            JOB_ID=7 SGE_TASK_ID=undefined | ''        | {"job":"7"
            JOB_ID=7 SGE_TASK_ID=3         | ''        | {"job":"7","task":"3"
            SLURM_JOB_ID=42                | ''        | {"job":"42"
            JOB_ID=7 SLURM_JOB_ID=42       | ''        | {"job":"7"
            JOB_ID=7                       | 9.2       | {"job":"9","task":"2"
            """)
    void realloc_theJob(String env, String job, String opening) throws Exception {
        Map<String, String> vars = new java.util.HashMap<>();
        for (String kv : env.split(" ")) {
            vars.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        List<String> args = new ArrayList<>(List.of("realloc", "--spec-sub", sub.toString()));
        if (!job.isEmpty()) {
            args.addAll(List.of("--job", job));
        }
        Exchange e = against(c -> alloc(c, "{}", 0, ""), vars, args.toArray(String[]::new));
        assertThat(e.run().code()).as(e.run().err()).isZero();
        assertThat(e.sent()).isEqualTo("0015 " + opening + ",\"spec_sub\":" + SUB + "}");
    }

    @Test
    void release_theRFileVerbatim_printsTheStateJson_exit0() throws Exception {
        String state = "{\"job\":\"7\",\"grants\":{\"node01\":{\"gpu\":[\"0\"]}},\"env\":{\"SGE_HGR_gpu\":\"0\"}}";
        Exchange e = against(c -> FakeDaemon.granting(c, state, "SGE_HGR_gpu=0"), Map.of("JOB_ID", "7"),
                "release", "--R", r.toString());
        assertThat(e.run()).isEqualTo(new Run(0, state + "\n", ""));
        assertThat(e.sent()).isEqualTo("0016 {\"job\":\"7\",\"R\":" + R + "}");
        Exchange all = against(c -> FakeDaemon.granting(c, state), Map.of(), "release", "--job", "7");
        assertThat(all.sent()).as("everything taken away").isEqualTo("0016 {\"job\":\"7\"}");
    }

    @Test
    void errorUnreachableUsage_exit2_1_2() throws Exception {
        Exchange refused = against(c -> FakeDaemon.refusing(c, "spec_add: the argument is not JSON"), Map.of("JOB_ID", "7"),
                "realloc", "--spec-add", spec.toString());
        assertThat(refused.run()).isEqualTo(new Run(2, "", "shell-stub: ERROR: spec_add: the argument is not JSON\n"));
        Path none = tmp.resolve("none.sock");
        assertThat(stub(Map.of("JOB_ID", "7", "RSMAP_SOCKET", none.toString()), "release")).isEqualTo(new Run(1, "",
                "shell-stub: cannot reach rsmapd at " + none + ": No such file or directory\n"));
        assertThat(against(c -> List.of(), Map.of("JOB_ID", "7"), "release").run())
                .isEqualTo(new Run(1, "", "shell-stub: no answer: lost rsmapd\n"));
        for (String[] args : List.of(new String[] {"realloc", "--job", "7"}, new String[] {"realloc", "--spec-add"},
                new String[] {"release", "--spec-add", "x"}, new String[] {"grow"}, new String[] {"release"})) {
            Run u = stub(Map.of(), args);
            assertThat(u.code()).as(String.join(" ", args)).isEqualTo(2);
            assertThat(u.err()).startsWith("shell-stub: ").contains("usage: shell-stub realloc");
        }
        assertThat(stub(Map.of("JOB_ID", "7"), "realloc", "--spec-add", tmp.resolve("none").toString()))
                .isEqualTo(new Run(2, "", "shell-stub: cannot read " + tmp.resolve("none") + ": No such file or directory\n"));
    }
}
