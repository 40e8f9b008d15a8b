// node filters and alternatives on the host: the discovered and configured attributes in QUERY and MODEL_DEF, and JOB_START's
// node filter (the admin limit of rsmapd.conf and the job's "filter") checked before anything is granted.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.Discovery;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

@Timeout(60)
class DaemonNodeFilterTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;
    Daemon daemon;

    /** node01: discovered x86_64, kernel 6.5.0-14-generic, 1.8GHz, 16 CPUs; configured fabric and cpu_speed. */
    @BeforeEach
    void start() throws Exception {
        Path root = tmp.resolve("root");
        write(root, "proc/sys/kernel/arch", "x86_64\n");
        write(root, "proc/sys/kernel/osrelease", "6.5.0-14-generic\n");
        write(root, "etc/os-release", "ID=rocky\n");
        write(root, "sys/devices/system/cpu/online", "0-15\n");
        write(root, "proc/cpuinfo", "cpu MHz\t\t: 1800.000\n");
        // no /proc/meminfo: memory is left out, and the daemon starts all the same
        Config config = TestDaemon.config(tmp.resolve("d"), "gpu=2(0 1)", "reconcile_interval = 0", "discover = on",
                "attributes = fabric=hdr, os=rhel", "attribute_types = fabric:string",
                "filter = arch != \"ppc64le\" && !(host in [\"node99\"])");
        daemon = TestDaemon.start(config, new Discovery(root, Optional.empty(), OptionalInt.empty()));
    }

    private static void write(Path root, String rel, String text) throws Exception {
        Files.createDirectories(root.resolve(rel).getParent());
        Files.writeString(root.resolve(rel), text);
    }

    @AfterEach
    void stop() throws Exception {
        daemon.close();
    }

    private List<Frame> call(Code code, String json) {
        Session s = DaemonSessions.as(daemon, "root", 0, 0, new ArrayList<>());
        return s.onCommand(json == null ? Frame.of(2, code.value()) : Frame.of(2, code.value(), json));
    }

    private String refusal(String json) {
        List<Frame> answer = call(Code.JOB_START, json);
        assertThat(answer).as(answer.toString()).hasSize(1);
        assertThat(answer.get(0).code()).isEqualTo(Code.ERROR.value());
        assertThat(daemon.cluster().runningJobs()).as("a refusal grants nothing").isEmpty();
        return answer.get(0).text(0);
    }

    @Test
    void query_showsTheAttributes_discoveredAndConfigured_andTheSlotsFromCpus() throws Exception {
        JsonNode state = JSON.readTree(call(Code.QUERY, null).get(0).text(0));
        assertThat(state.get("attributes").toString()).isEqualTo("{\"arch\":\"x86_64\",\"kernel\":\"6.5.0-14-generic\","
                + "\"os\":\"rhel\",\"cpus\":\"16\",\"cpu_speed\":\"1800MHz\",\"fabric\":\"hdr\"}");
        assertThat(state.get("slots").asInt()).isEqualTo(16);
        assertThat(daemon.log()).anyMatch(l -> l.startsWith("attribute memory not discovered: ")
                && l.endsWith("/proc/meminfo: no such file"));
    }

    @Test
    void modelDef_describesEachAttribute_typed_afterTheJobFields_withTheValuesOnTheHostElement() throws Exception {
        List<Frame> model = call(Code.MODEL_DEF, null);
        List<JsonNode> defs = new ArrayList<>();
        JsonNode host = null;
        for (Frame f : model) {
            if (f.code() == Code.ATTR_DEF.value()) {
                defs.add(JSON.readTree(f.text(0)));
            } else if (f.code() == Code.ELEMENT_DEF.value() && JSON.readTree(f.text(0)).path("element").asText()
                    .equals("host")) {
                host = JSON.readTree(f.text(0));
            }
        }
        List<String> names = defs.stream().map(d -> d.path("name").asText()).toList();
        assertThat(names.subList(names.indexOf("job.env") + 1, names.size())).containsExactly("host.slots",
                "host.attr.arch", "host.attr.kernel", "host.attr.os", "host.attr.cpus", "host.attr.cpu_speed",
                "host.attr.fabric");
        JsonNode kernel = defs.get(names.indexOf("host.attr.kernel"));
        assertThat(kernel.path("type").asText()).isEqualTo("VERSION");
        assertThat(defs.get(names.indexOf("host.attr.cpu_speed")).path("type").asText()).isEqualTo("NUMBER");
        assertThat(defs.get(names.indexOf("host.attr.fabric")).path("type").asText()).isEqualTo("STRING");
        assertThat(host.path("attrs").path(kernel.path("id").asText()).asText()).isEqualTo("6.5.0-14-generic");
        assertThat(host.path("attrs").path(defs.get(names.indexOf("host.slots")).path("id").asText()).asInt())
                .isEqualTo(16);
    }

    @Test
    void jobStart_aFilterThisHostPasses_isGranted() {
        List<Frame> answer = call(Code.JOB_START, "{\"job\":\"7\",\"user\":\"alice\",\"request\":\"gpu=1\","
                + "\"filter\":\"kernel >= 6.5 && kernel != 6.5.2 && fabric in [\\\"hdr\\\", \\\"ndr\\\"]\"}");
        assertThat(answer.get(answer.size() - 1)).as(answer.toString()).isEqualTo(Session.ok(2));
        assertThat(daemon.cluster().runningJobs()).containsExactly("7");
    }

    @Test
    void jobStart_aFilterThisHostFails_isRefusedNamingTheJobFilterTheAttributeAndItsValue() {
        assertThat(refusal("{\"job\":\"7\",\"user\":\"alice\",\"request\":\"gpu=1\",\"filter\":\"cpu_speed > 2GHz\"}"))
                .isEqualTo("filter: job filter fails on node01: cpu_speed=1800MHz does not satisfy cpu_speed > 2GHz");
        assertThat(refusal("{\"job\":\"7\",\"request\":\"gpu=1\",\"filter\":\"memory >= 64G\"}"))
                .isEqualTo("filter: job filter fails on node01: memory is not set, which does not satisfy memory >= 64G");
        // PBS's alternatives design, use case 2: none of the allocated nodes will be node01
        assertThat(refusal("{\"job\":\"7\",\"request\":\"gpu=1\",\"filter\":\"!(host in [\\\"node01\\\"])\"}"))
                .startsWith("filter: job filter fails on node01: host=node01 satisfies host in [\"node01\"]");
    }

    @Test
    void jobStart_thisHostFailingTheAdminLimit_isRefusedNamingTheAdminLimit() throws Exception {
        daemon.close();
        Config config = TestDaemon.config(tmp.resolve("e"), "gpu=2(0 1)", "reconcile_interval = 0",
                "attributes = arch=ppc64le", "filter = arch != \"ppc64le\"");
        daemon = TestDaemon.start(config);
        assertThat(refusal("{\"job\":\"7\",\"request\":\"gpu=1\",\"filter\":\"arch == \\\"x86_64\\\"\"}"))
                .as("the admin limit is checked first")
                .isEqualTo("filter: admin limit fails on node01: arch=ppc64le does not satisfy arch != \"ppc64le\"");
        assertThat(refusal("{\"job\":\"7\",\"request\":\"gpu=1\"}")).startsWith("filter: admin limit fails on node01: ");
    }

    @Test
    void jobStart_aFilterThatDoesNotParse_isAJobError_withItsColumn() {
        assertThat(refusal("{\"job\":\"7\",\"request\":\"gpu=1\",\"filter\":\"arch = \\\"x86_64\\\"\"}"))
                .isEqualTo("filter: column 6: '=' is not an operator; compare with ==");
        assertThat(refusal("{\"job\":\"7\",\"request\":\"gpu=1\",\"filter\":\"kernel == \\\"6.5\\\"\"}"))
                .startsWith("filter: column 11: 'kernel' is declared version");
        assertThat(refusal("{\"job\":\"7\",\"request\":\"gpu=1\",\"filter\":7}"))
                .isEqualTo("JOB_START: \"filter\" is a string, not the number '7'");
    }

    @Test
    void jobStart_onlyAFilter_isCheckedAndAnsweredWithNothingGranted() throws Exception {
        List<Frame> answer = call(Code.JOB_START, "{\"job\":\"7\",\"user\":\"alice\",\"filter\":\"arch == \\\"x86_64\\\"\"}");
        assertThat(answer.get(answer.size() - 1)).as(answer.toString()).isEqualTo(Session.ok(2));
        assertThat(JSON.readTree(answer.get(0).text(0)).path("grants").size()).isZero();
        assertThat(daemon.cluster().runningJobs()).isEmpty();
        assertThat(refusal("{\"job\":\"7\",\"filter\":\"arch == \\\"aarch64\\\"\"}")).startsWith("filter: job filter fails");
        assertThat(refusal("{\"job\":\"7\"}")).isEqualTo("JOB_START needs \"request\"");
    }

    @Test
    void jobStartWithAlternatives_grantsTheFirstThatCanStartNow_andOnlyIt() throws Exception {
        call(Code.JOB_START, "{\"job\":\"1\",\"user\":\"alice\",\"request\":\"gpu=1\"}");
        List<Frame> a = call(Code.JOB_START, "{\"job\":\"2\",\"user\":\"bob\",\"alternatives\":[\"gpu=2\",\"gpu=1\"]}");
        JsonNode job = JSON.readTree(a.get(0).text(0));
        assertThat(job.path("alternative").asInt()).as(a.toString()).isEqualTo(1);
        assertThat(job.path("request").asText()).isEqualTo("gpu=1");
        assertThat(a.get(0).text(1)).isEqualTo("SGE_HGR_gpu=1");
        List<Frame> retry = call(Code.JOB_START, "{\"job\":\"2\",\"user\":\"bob\",\"alternatives\":[\"gpu=2\",\"gpu=1\"]}");
        assertThat(JSON.readTree(retry.get(0).text(0)).path("alternative").asInt()).as("a retry: the same").isEqualTo(1);
        assertThat(refused3("{\"job\":\"3\",\"alternatives\":[\"gpu=2\",\"gpu=1\"]}"))
                .startsWith("job 3: none of its 2 alternatives can be granted now (0: ");
        assertThat(refused3("{\"job\":\"3\",\"alternatives\":[\"gpu=1\",\"gpu=1[scope=job]\"]}"))
                .isEqualTo("request: alternative 1: column 7: scope= needs same=");
        assertThat(refused3("{\"job\":\"3\",\"request\":\"gpu=1\",\"alternatives\":[\"gpu=1\"]}"))
                .contains("not both");
        assertThat(daemon.cluster().runningJobs()).containsExactlyInAnyOrder("1", "2");
    }

    private String refused3(String json) {
        List<Frame> answer = call(Code.JOB_START, json);
        assertThat(answer.get(0).code()).as(answer.toString()).isEqualTo(Code.ERROR.value());
        return answer.get(0).text(0);
    }

    @Test
    void aReallocWithAFilter_thisHostFails_isDeniedNamingTheAttribute() throws Exception {
        call(Code.JOB_START, "{\"job\":\"1\",\"user\":\"alice\",\"request\":\"gpu=1\"}");
        List<Frame> r = call(Code.REALLOC, "{\"job\":\"1\",\"add\":\"gpu=1\",\"filter\":\"cpu_speed > 2GHz\"}");
        assertThat(r.get(0).code()).as(r.toString()).isEqualTo(Code.ALLOC.value());
        assertThat(r.get(0).text(1)).as("DENY").isEqualTo("1");
        assertThat(r.get(0).text(2)).contains("job filter fails on node01").contains("cpu_speed");
        List<Frame> ok = call(Code.REALLOC, "{\"job\":\"1\",\"add\":\"gpu=1\",\"filter\":\"cpus >= 16\"}");
        assertThat(ok.get(0).text(1)).as("SUCCESS").isEqualTo("0");
    }
}
