// Crash safety of slices on demand (docs/gpus.md, "Partitions on demand"): rsmapd SIGKILLed at 100 random
// moments while jobs start and end - between the intent and the creation, between JOB_END's narrowing and the
// destroy (the stand-in NVML widens both windows) - and restarted: the driver then holds exactly the slices
// of the jobs rsmapd holds, plus the admin's static one.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
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
        Files.deleteIfExists(socket);
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), Main.class.getName(), "--config", conf.toString())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(tmp.resolve("rsmapd.log").toFile()));
        pb.environment().put("RSMAP_NVML_STUB", description.toString());
        Process p = pb.start();
        for (int i = 0; i < 1200 && !Files.exists(socket); i++) {
            assertThat(p.isAlive()).as(Files.readString(tmp.resolve("rsmapd.log"))).isTrue();
            Thread.sleep(25);
        }
        assertThat(socket).exists();
        return p;
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

    @Test
    void hundredRandomSigkills_whileSlicesAreMadeAndDestroyed_leaveExactlyTheHeldOnesAndTheAdmins() throws Exception {
        Path state = tmp.resolve("mig-state.json");
        Path description = GpuStub.use(tmp.resolve("nvml.json"), MigStub.description(state,
                ",\"create_delay_ms\":20,\"destroy_delay_ms\":20"));
        Files.writeString(state, "{\"instances\":[{\"gpu\":\"" + MigStub.UUID + "\",\"profile\":\"1g.10gb\",\"placement\":0,"
                + "\"gi\":9,\"ci\":0,\"uuid\":\"MIG-admins\"}]}");
        Files.createDirectories(tmp.resolve("dev"));
        MigStub.caps(tmp.resolve("mig-minors"), tmp.resolve("dev"), false);
        Config config = TestDaemon.config(tmp.resolve("d"), "NONE", "nvml_library = " + GpuStub.LIBRARY,
                "gpu_map = gpu", "mig_map = mig", "mig_caps_file = " + tmp.resolve("mig-minors"),
                "gpu_dev_dir = " + tmp.resolve("dev"), "reconcile_interval = 0", "socket_mode = 0666");
        MigStub.declare(config.complexes());
        Path conf = config.complexes().resolveSibling("rsmapd.conf");
        Random random = new Random(SEED);
        int job = 0;
        int created = 0;
        String refused = "";
        for (int k = 0; k < KILLS; k++) {
            Process d = daemon(conf, config.socket(), description);
            try {
                Set<String> expected = new TreeSet<>(held(config.socket()));
                expected.remove("");
                expected.add("MIG-admins");
                assertThat(inDriver(state)).as("after restart %d (seed %d)", k, SEED).isEqualTo(expected);
                // Starts and ends until the kill, at a random moment of the next 50..800 ms.
                long killAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50 + random.nextInt(750));
                List<String> running = new ArrayList<>(held(config.socket()).isEmpty() ? List.of() : jobsOf(config.socket()));
                try (TestClient c = new TestClient(config.socket())) {
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
                                String id = Integer.toString(++job);
                                List<Frame> a = c.call(Frame.of(3, Code.JOB_START.value(), "{\"job\":\"" + id
                                        + "\",\"user\":\"alice\",\"request\":\"mig=1[profile=1g.10gb]\"}"));
                                if (!a.isEmpty() && a.get(0).code() == Code.STATE.value()) {
                                    running.add(id);
                                    created++;
                                } else if (!a.isEmpty()) {
                                    refused = a.get(0).toString();
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
            } finally {
                d.destroyForcibly();
                d.waitFor();
            }
        }
        Process d = daemon(conf, config.socket(), description);
        try {
            Set<String> expected = new TreeSet<>(held(config.socket()));
            expected.remove("");
            expected.add("MIG-admins");
            assertThat(inDriver(state)).isEqualTo(expected);
            assertThat(created).as("slices were made between the kills; a refusal: %s", refused).isGreaterThan(KILLS / 2);
        } finally {
            d.destroy();
            d.waitFor(20, TimeUnit.SECONDS);
        }
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
