// docs/containers.md, "In step with the grant": SIGKILL of rsmapd between a grant and its CDI spec (a
// realloc's SUCCESS on disk, its spec not rewritten; a JOB_START's spec not written) and between a JOB_END
// and the spec's removal; after each restart cdi_dir holds exactly the specs of the jobs holding devices.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.cdi.CdiSchema;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

@Timeout(240)
class CdiCrashIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;
    Config config;
    Path conf;
    Process daemon;

    @AfterEach
    void stop() throws Exception {
        if (daemon != null) {
            daemon.destroyForcibly().waitFor();
        }
    }

    private Path cdi() {
        return tmp.resolve("d/cdi");
    }

    /** rsmapd as a process of its own; with a fault point ({@code write} or {@code remove}) it stops there. */
    private void start(String fault) throws Exception {
        daemon = fault == null ? RsmapdProcess.start(conf, config.socket(), tmp.resolve("rsmapd.log"))
                : RsmapdProcess.start(FaultingMain.class, conf, config.socket(), tmp.resolve("rsmapd.log"),
                        "-Drsmap.test.cdi.fault=" + fault
                        + ":" + tmp.resolve("at-" + fault));
    }

    private void kill() throws Exception {
        daemon.destroyForcibly(); // SIGKILL
        daemon.waitFor();
        daemon = null;
    }

    private TestClient client() throws Exception {
        TestClient c = new TestClient(config.socket());
        assertThat(c.call(Frame.of(1, Code.INIT.value(), Session.VERSION))).containsExactly(Session.ok(1));
        return c;
    }

    private List<Frame> call(Code code, String json) throws Exception {
        try (TestClient c = client()) {
            return c.call(Frame.of(2, code.value(), json));
        }
    }

    /** Sends a command the daemon stops in at its fault point, and kills it there. */
    private void killedAt(String fault, Code code, String json) throws Exception {
        try (TestClient c = client()) {
            c.send(Frame.of(2, code.value(), json).encode());
            Path marker = tmp.resolve("at-" + fault);
            for (int i = 0; i < 600 && !Files.exists(marker); i++) {
                Thread.sleep(50);
            }
            assertThat(marker).as("rsmapd reached its fault point " + fault).exists();
            kill();
            Files.delete(marker);
        }
    }

    /** Job -> the number of gpu instances it holds, as the running rsmapd says. */
    private Map<String, Integer> held() throws Exception {
        JsonNode q = JSON.readTree(call(Code.QUERY, "{}").get(0).text(0));
        Map<String, Integer> out = new TreeMap<>();
        q.path("jobs").forEach(j -> out.put(j.path("job").asText(), j.path("grants").path("node01").path("gpu").size()));
        return out;
    }

    /** The specs in cdi_dir: job -> its number of device nodes; each file valid against the CDI schema. */
    private Map<String, Integer> specs() throws Exception {
        Map<String, Integer> out = new TreeMap<>();
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.list(cdi())) {
            s.forEach(files::add);
        }
        for (Path f : files) {
            String name = f.getFileName().toString();
            assertThat(name).as("only specs, no temporary file").matches("rsmapd-job-[0-9]+\\.json");
            JsonNode spec = JSON.readTree(f.toFile());
            out.put(spec.path("devices").path(0).path("name").asText(), spec.path("devices").path(0)
                    .path("containerEdits").path("deviceNodes").size());
        }
        if (!files.isEmpty()) {
            CdiSchema.assertValid(files);
        }
        return out;
    }

    @Test
    void sigkillBetweenAGrantAndItsSpec_andBetweenAJobEndAndTheRemoval_restartLeavesExactlyTheHeldJobsSpecs()
            throws Exception {
        CdiSchema.assumePresent();
        config = TestDaemon.config(tmp.resolve("d"), "gpu=4(0[devices=/dev/zero] 1[devices=/dev/full] "
                + "2[devices=/dev/urandom] 3[devices=/dev/random])");
        conf = config.complexes().resolveSibling("rsmapd.conf");
        start(null);
        assertThat(call(Code.JOB_START, "{\"job\":\"21\",\"request\":\"gpu=1\"}").get(0).code())
                .isEqualTo(Code.STATE.value());
        assertThat(call(Code.JOB_START, "{\"job\":\"22\",\"request\":\"gpu=1\"}").get(0).code())
                .isEqualTo(Code.STATE.value());
        assertThat(specs()).isEqualTo(Map.of("21", 1, "22", 1));
        kill();

        // A realloc's SUCCESS is on disk; rsmapd dies before the spec has the added card.
        start("write");
        killedAt("write", Code.REALLOC, "{\"job\":\"21\",\"tag\":\"grow\",\"add\":\"gpu=1\"}");
        assertThat(specs()).as("the spec as the kill left it").isEqualTo(Map.of("21", 1, "22", 1));
        start(null);
        assertThat(held()).isEqualTo(Map.of("21", 2, "22", 1));
        assertThat(specs()).as("written at start-up as the journal says").isEqualTo(held());
        kill();

        // A JOB_START whose spec is not written yet: neither granted on disk nor a spec.
        start("write");
        killedAt("write", Code.JOB_START, "{\"job\":\"23\",\"request\":\"gpu=1\"}");
        start(null);
        assertThat(held()).isEqualTo(Map.of("21", 2, "22", 1));
        assertThat(specs()).isEqualTo(held());
        kill();

        // A JOB_END on disk; rsmapd dies before the spec is removed.
        start("remove");
        killedAt("remove", Code.JOB_END, "{\"job\":\"22\"}");
        assertThat(specs()).as("the spec as the kill left it").containsKey("22");
        start(null);
        assertThat(held()).isEqualTo(Map.of("21", 2));
        assertThat(specs()).as("removed at start-up").isEqualTo(held());
    }
}
