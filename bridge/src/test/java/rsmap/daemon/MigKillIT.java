// Crash safety of slices on demand (docs/gpus.md, "Partitions on demand"): rsmapd SIGKILLed at 100 random
// moments while jobs start and end - between the intent and the creation, between JOB_END's narrowing and the
// destroy (the stand-in NVML widens both windows) - and restarted: the driver then holds exactly the slices
// of the jobs rsmapd holds, plus the admin's static one. And with mig.json lost at some restarts: no held
// slice destroyed, each the job's again.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

@Timeout(900)
class MigKillIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long SEED = Long.getLong("rsmap.seed", 26L);
    private static final int KILLS = Integer.getInteger("rsmap.mig.kills", 100);
    @TempDir
    Path tmp;

    private Process daemon(Path conf, Path socket, Path description) throws Exception {
        return RsmapdProcess.start(conf, socket, tmp.resolve("rsmapd.log"),
                Map.of("RSMAP_NVML_STUB", description.toString()), "-XX:TieredStopAtLevel=1");
    }

    /** The MIG UUIDs of the jobs rsmapd holds (their SGE_HGR_mig), as QUERY says. */
    private static Set<String> held(Path socket) throws Exception {
        try (TestClient c = new TestClient(socket)) {
            c.call(Frame.of(1, Code.INIT.value(), Session.VERSION));
            JsonNode q = JSON.readTree(c.call(Frame.of(2, Code.QUERY.value())).get(0).text(0));
            Set<String> out = new TreeSet<>();
            q.path("jobs").forEach(j -> out.add(j.path("env").path("SGE_HGR_mig").asText()));
            return out;
        }
    }

    private static Set<String> inDriver(Path state) throws IOException {
        Set<String> out = new TreeSet<>();
        if (Files.exists(state)) {
            JSON.readTree(Files.readString(state)).path("instances").forEach(i -> out.add(i.path("uuid").asText()));
        }
        return out;
    }

    /** The daemon's host: the stand-in NVML with an admin's static slice, its settings and its files. */
    private record Host(Path state, Path description, Config config, Path conf) {
    }

    private Host host() throws Exception {
        NvmlHost gpu = NvmlHost.in(tmp);
        Path description = gpu.describeMig(",\"create_delay_ms\":20,\"destroy_delay_ms\":20");
        Files.writeString(gpu.migState(), "{\"instances\":[{\"gpu\":\"" + MigStub.UUID + "\",\"profile\":\"1g.10gb\","
                + "\"placement\":0,\"gi\":9,\"ci\":0,\"uuid\":\"MIG-admins\"}]}");
        gpu.migCaps(false);
        Config config = gpu.migConfig(tmp.resolve("d"), "NONE", "reconcile_interval = 0", "socket_mode = 0666");
        return new Host(gpu.migState(), description, config, config.complexes().resolveSibling("rsmapd.conf"));
    }

    /** What the driver must hold with rsmapd up: the held jobs' slices and the admin's. */
    private static Set<String> expected(Path socket) throws Exception {
        Set<String> expected = new TreeSet<>(held(socket));
        expected.remove("");
        expected.add("MIG-admins");
        return expected;
    }

    /** Starts and ends jobs until rsmapd is killed, at a random moment of the next 50..800 ms. */
    private static void untilKilled(Process d, Path socket, Random random, int[] made, String[] refused)
            throws Exception {
        long killAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50 + random.nextInt(750));
        List<String> running = new ArrayList<>(held(socket).isEmpty() ? List.of() : jobsOf(socket));
        try (TestClient c = new TestClient(socket)) {
            c.call(Frame.of(1, Code.INIT.value(), Session.VERSION));
            Thread killer = new Thread(() -> {
                while (System.nanoTime() < killAt) {
                    Thread.onSpinWait();
                }
                d.destroyForcibly();
            });
            killer.start();
            try {
                while (d.isAlive()) {
                    if (running.size() < 4 && (running.isEmpty() || random.nextBoolean())) {
                        String id = Integer.toString(++made[0]);
                        List<Frame> a = c.call(Frame.of(3, Code.JOB_START.value(), "{\"job\":\"" + id
                                + "\",\"user\":\"alice\",\"request\":\"mig=1[profile=1g.10gb]\"}"));
                        if (!a.isEmpty() && a.get(0).code() == Code.STATE.value()) {
                            running.add(id);
                            made[1]++;
                        } else if (!a.isEmpty()) {
                            refused[0] = a.get(0).toString();
                        }
                    } else {
                        String id = running.remove(random.nextInt(running.size()));
                        c.call(Frame.of(4, Code.JOB_END.value(), "{\"job\":\"" + id + "\"}"));
                    }
                }
            } catch (IOException | rsmap.wire.FrameException | RuntimeException e) {
                // the connection died with rsmapd: the kill
            }
            killer.join();
        }
    }

    @Test
    void hundredRandomSigkills_whileSlicesAreMadeAndDestroyed_leaveExactlyTheHeldOnesAndTheAdmins() throws Exception {
        Host h = host();
        Random random = new Random(SEED);
        int[] made = {0, 0}; // job ids used, slices granted
        String[] refused = {""};
        for (int k = 0; k < KILLS; k++) {
            Process d = daemon(h.conf(), h.config().socket(), h.description());
            try {
                assertThat(inDriver(h.state())).as("after restart %d (seed %d)", k, SEED)
                        .isEqualTo(expected(h.config().socket()));
                untilKilled(d, h.config().socket(), random, made, refused);
            } finally {
                d.destroyForcibly();
                d.waitFor();
            }
        }
        Process d = daemon(h.conf(), h.config().socket(), h.description());
        try {
            assertThat(inDriver(h.state())).isEqualTo(expected(h.config().socket()));
            assertThat(made[1]).as("slices were made between the kills; a refusal: %s", refused[0]).isGreaterThan(KILLS / 2);
        } finally {
            d.destroy();
            d.waitFor(20, TimeUnit.SECONDS);
        }
    }

    /**
     * The same with mig.json lost at a third of the restarts (docs/gpus.md, "Crash safety"): every held job's
     * slice is still in the driver and is the job's again, adopted by the UUID its journal record names. A slice
     * whose job's start or end the kill cut short cannot be told from an admin's then: the admin destroys it
     * (here: the stand-in's state, while rsmapd is stopped), and the next restart holds exactly as above.
     */
    @Test
    void randomSigkills_withMigJsonLostAtSomeRestarts_neverDestroyAHeldSlice_andEachIsItsJobsAgain() throws Exception {
        Host h = host();
        Random random = new Random(SEED + 1);
        Path checkpoint = h.config().stateDir().resolve("mig.json");
        int[] made = {0, 0};
        String[] refused = {""};
        int lost = 0;
        int adopted = 0; // held slices checked after a restart that lost mig.json
        int cleaned = 0;
        for (int k = 0; k < KILLS / 2; k++) {
            boolean lose = k % 3 == 1; // every third restart: not drawn from random, whose draws follow the timing
            if (lose) {
                Files.deleteIfExists(checkpoint);
                lost++;
            }
            Process d = daemon(h.conf(), h.config().socket(), h.description());
            try {
                JsonNode q = query(h.config().socket());
                Set<String> driver = inDriver(h.state());
                for (JsonNode j : q.path("jobs")) {
                    String uuid = j.path("env").path("SGE_HGR_mig").asText();
                    assertThat(driver).as("job %s's slice after restart %d (lost: %s, seed %d)", j.path("job").asText(),
                            k, lose, SEED + 1).contains(uuid);
                    assertThat(ownerOf(q, uuid)).as("%s after restart %d", uuid, k).isEqualTo(j.path("job").asText());
                    adopted += lose ? 1 : 0;
                }
                assertThat(driver).contains("MIG-admins");
                Set<String> expected = expected(h.config().socket());
                if (!driver.equals(expected)) {
                    assertThat(lose).as("only a lost mig.json leaves a slice of no job: %s against %s", driver, expected)
                            .isTrue();
                    d.destroy(); // stopped in order, then the admin destroys the leftovers
                    assertThat(d.waitFor(20, TimeUnit.SECONDS)).isTrue();
                    destroyInDriver(h.state(), expected);
                    cleaned++;
                    d = daemon(h.conf(), h.config().socket(), h.description());
                    assertThat(inDriver(h.state())).isEqualTo(expected(h.config().socket()));
                }
                untilKilled(d, h.config().socket(), random, made, refused);
            } finally {
                d.destroyForcibly();
                d.waitFor();
            }
        }
        assertThat(lost).as("mig.json was lost at some restarts").isGreaterThan(KILLS / 10);
        assertThat(adopted).as("held slices adopted again (%d restarts left a slice of no job)", cleaned).isGreaterThan(0);
        System.out.printf("MigKillIT: mig.json lost at %d of %d restarts, %d held slices adopted again, %d restarts left"
                + " a slice of no job%n", lost, KILLS / 2, adopted, cleaned);
        assertThat(made[1]).as("slices were made between the kills; a refusal: %s", refused[0]).isGreaterThan(KILLS / 4);
    }

    private static JsonNode query(Path socket) throws Exception {
        try (TestClient c = new TestClient(socket)) {
            c.call(Frame.of(1, Code.INIT.value(), Session.VERSION));
            return JSON.readTree(c.call(Frame.of(2, Code.QUERY.value())).get(0).text(0));
        }
    }

    /** The job QUERY's slice view names for {@code uuid} ("" for an admin's). */
    private static String ownerOf(JsonNode q, String uuid) {
        for (JsonNode x : q.path("mig")) {
            if (x.path("uuid").asText().equals(uuid)) {
                return x.path("job").asText();
            }
        }
        return "(not in QUERY's mig)";
    }

    /** An admin's nvidia-smi mig -dci/-dgi of every slice but {@code kept}, in the stand-in's state. */
    private static void destroyInDriver(Path state, Set<String> kept) throws IOException {
        com.fasterxml.jackson.databind.node.ObjectNode root =
                (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(Files.readString(state));
        com.fasterxml.jackson.databind.node.ArrayNode left = JSON.createArrayNode();
        root.path("instances").forEach(i -> {
            if (kept.contains(i.path("uuid").asText())) {
                left.add(i);
            }
        });
        root.set("instances", left);
        Files.writeString(state, root.toString());
    }

    private static List<String> jobsOf(Path socket) throws Exception {
        try (TestClient c = new TestClient(socket)) {
            c.call(Frame.of(1, Code.INIT.value(), Session.VERSION));
            List<String> out = new ArrayList<>();
            JSON.readTree(c.call(Frame.of(2, Code.QUERY.value())).get(0).text(0)).path("jobs")
                    .forEach(j -> out.add(j.path("job").asText()));
            return out;
        }
    }
}
