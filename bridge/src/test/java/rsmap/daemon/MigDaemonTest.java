// Slices on demand through the stand-in NVML (docs/gpus.md, "Partitions on demand"): a card is one pool
// of whole-card grants and slices, slices exist in the driver exactly while held, the smallest profile
// that satisfies characteristics, explain per profile, a failed creation refused and its card tainted, an
// admin's slices left alone and counted as used, orphans destroyed at start.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.ConfigText;
import rsmap.daemon.devices.MigSlot;
import rsmap.daemon.job.Views;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

@Timeout(60)
class MigDaemonTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;
    Path state;

    private Config config(String extra) throws Exception {
        return config(extra, "NONE");
    }

    private Config config(String extra, String values) throws Exception {
        state = tmp.resolve("mig-state.json");
        GpuStub.use(tmp.resolve("nvml.json"), MigStub.description(state, extra));
        Files.createDirectories(tmp.resolve("dev"));
        Files.writeString(tmp.resolve("dev/nvidiactl"), "");
        MigStub.caps(tmp.resolve("mig-minors"), tmp.resolve("dev"), false);
        Config c = TestDaemon.config(tmp.resolve("d"), values, "nvml_library = " + GpuStub.LIBRARY, "gpu_map = gpu",
                "mig_map = mig", "mig_caps_file = " + tmp.resolve("mig-minors"), "gpu_dev_dir = " + tmp.resolve("dev"),
                "reconcile_interval = 0");
        MigStub.declare(c.complexes());
        return c;
    }

    private static List<Frame> call(Daemon d, Code code, String json) {
        Session s = DaemonSessions.as(d, "root", 0, 0, new ArrayList<>());
        return s.onCommand(json == null ? Frame.of(2, code.value()) : Frame.of(2, code.value(), json));
    }

    private static List<Frame> start(Daemon d, String job, String request) {
        return call(d, Code.JOB_START, "{\"job\":\"" + job + "\",\"user\":\"alice\",\"request\":\"" + request + "\"}");
    }

    private static JsonNode granted(Daemon d, String job, String request) throws Exception {
        List<Frame> a = start(d, job, request);
        assertThat(a.get(0).code()).as(a.toString()).isEqualTo(Code.STATE.value());
        return JSON.readTree(a.get(0).text(0));
    }

    private static String env(JsonNode job, String name) {
        return job.path("env").path(name).asText();
    }

    private List<String> slicesInDriver() throws Exception {
        List<String> out = new ArrayList<>();
        if (Files.exists(state)) {
            JSON.readTree(Files.readString(state)).path("instances").forEach(i -> out.add(i.path("profile").asText()
                    + "@" + i.path("placement").asInt() + "=" + i.path("uuid").asText()));
        }
        return out;
    }

    @Test
    void threeSlices_fourthWaits_wholeCardWaitsUntilTheLastJobEnd_slicesExistExactlyWhileHeld() throws Exception {
        try (Daemon d = TestDaemon.start(config(""))) {
            List<String> uuids = new ArrayList<>();
            for (String job : List.of("1", "2", "3")) {
                JsonNode j = granted(d, job, "mig=1[profile=2g.20gb]");
                String u = env(j, "SGE_HGR_mig");
                assertThat(u).as(j.toString()).startsWith("MIG-");
                assertThat(env(j, "CUDA_VISIBLE_DEVICES")).isEqualTo(u);
                uuids.add(u);
            }
            assertThat(slicesInDriver()).hasSize(3).allMatch(s -> s.startsWith("2g.20gb@"))
                    .allMatch(s -> uuids.contains(s.substring(s.indexOf('=') + 1)));
            List<Frame> fourth = start(d, "4", "mig=1[profile=2g.20gb]");
            assertThat(fourth.get(0).code()).isEqualTo(Code.ERROR.value());
            JsonNode x = JSON.readTree(call(d, Code.QUERY, "{\"explain\":\"mig=1[profile=2g.20gb]\"}").get(0).text(0))
                    .path("explain");
            assertThat(x.path("can_start").asBoolean()).isFalse();
            assertThat(x.path("text").asText()).contains("2g.20gb: no placement free: 6 of 7 compute slices held")
                    .contains("1g.10gb: 1 of 7 placements free");
            assertThat(start(d, "5", "gpu=1").get(0).code()).as("the whole card while slices are held")
                    .isEqualTo(Code.ERROR.value());
            JsonNode q = query(d);
            assertThat(q.path("mig")).hasSize(3);
            assertThat(q.path("mig").get(0).path("card").asText()).isEqualTo(MigStub.UUID);
            assertThat(q.path("mig").get(0).path("profile").asText()).isEqualTo("2g.20gb");
            for (String job : List.of("1", "2")) {
                assertThat(call(d, Code.JOB_END, "{\"job\":\"" + job + "\"}").get(0).code()).isEqualTo(Code.OK.value());
            }
            assertThat(slicesInDriver()).hasSize(1);
            assertThat(start(d, "5", "gpu=1").get(0).code()).isEqualTo(Code.ERROR.value());
            call(d, Code.JOB_END, "{\"job\":\"3\"}");
            assertThat(slicesInDriver()).isEmpty();
            JsonNode whole = granted(d, "5", "gpu=1");
            assertThat(env(whole, "CUDA_VISIBLE_DEVICES")).isEqualTo(MigStub.UUID);
            assertThat(start(d, "6", "mig=1[profile=1g.10gb]").get(0).code()).as("the card is held whole")
                    .isEqualTo(Code.ERROR.value());
            assertThat(slicesInDriver()).isEmpty();
        }
    }

    @Test
    void anotherUsersSlice_showsItsJobMasked_ownSliceAndRootSeeTheJob() throws Exception {
        try (Daemon d = TestDaemon.start(config(""))) {
            granted(d, "1", "mig=1[profile=1g.10gb]"); // alice's
            assertThat(call(d, Code.JOB_START, "{\"job\":\"2\",\"user\":\"bob\",\"request\":\"mig=1[profile=1g.10gb]\"}")
                    .get(0).code()).isEqualTo(Code.STATE.value());
            Session bob = DaemonSessions.as(d, "bob", 1001, 0, new ArrayList<>());
            JsonNode seen = JSON.readTree(bob.onCommand(Frame.of(3, Code.QUERY.value())).get(0).text(0)).path("mig");
            assertThat(seen).hasSize(2);
            List<String> jobs = new ArrayList<>();
            seen.forEach(x -> jobs.add(x.path("job").asText()));
            assertThat(jobs).containsExactlyInAnyOrder(Views.OTHER, "2");
            List<String> asRoot = new ArrayList<>();
            query(d).path("mig").forEach(x -> asRoot.add(x.path("job").asText()));
            assertThat(asRoot).containsExactlyInAnyOrder("1", "2");
            java.io.StringWriter out = new java.io.StringWriter();
            int code = rsmap.cli.Main.run(new java.io.PrintWriter(out), new java.io.PrintWriter(new java.io.StringWriter()),
                    "status", "--socket", d.socket().toString());
            assertThat(code).isZero();
            assertThat(out.toString()).as("rsmap status prints the slices as a table").contains("mig slices\n")
                    .containsPattern("  1g\\.10gb +created +on " + MigStub.UUID + "  gi \\d+ ci 0  MIG-\\S+  job 1\n")
                    .containsPattern("  1g\\.10gb +created .*  job 2\n");
        }
    }

    @Test
    void characteristics_smallestProfileThatSatisfiesThem() throws Exception {
        try (Daemon d = TestDaemon.start(config(""))) {
            granted(d, "1", "mig=1[memory=20G]");
            granted(d, "2", "mig=1[memory=15G]");
            assertThat(slicesInDriver()).extracting(s -> s.substring(0, s.indexOf('@')))
                    .containsExactly("3g.40gb", "2g.20gb");
        }
    }

    @Test
    void failedCreation_refusedNamingNvmlsError_nothingLeft_cardTainted() throws Exception {
        try (Daemon d = TestDaemon.start(config(",\"fail_create\":true"))) {
            List<Frame> a = start(d, "1", "mig=1[profile=1g.10gb]");
            assertThat(a.get(0).code()).isEqualTo(Code.ERROR.value());
            assertThat(a.get(0).text(0)).contains("NVML_ERROR_INSUFFICIENT_RESOURCES");
            assertThat(slicesInDriver()).isEmpty();
            assertThat(d.cluster().runningJobs()).isEmpty();
            assertThat(start(d, "2", "gpu=1").get(0).code()).as("a tainted card gets no new grant")
                    .isEqualTo(Code.ERROR.value());
            JsonNode x = JSON.readTree(call(d, Code.QUERY, "{\"explain\":\"gpu=1\"}").get(0).text(0)).path("explain");
            assertThat(x.path("text").asText()).contains("tainted");
        }
    }

    /**
     * docs/health.md, source mig: a failed creation taints its card's whole-card instance with NVML's error -
     * in QUERY, rsmap status (its slices blocked by it), explain and the taint event - and RELOAD and a
     * restart keep it; rsmap undrain clears it, and a job then gets the card.
     */
    @Test
    void failedCreation_taintsTheCardAsSourceMig_seenEverywhere_keptByReloadAndRestart_undrainClearsIt()
            throws Exception {
        Config c = config(",\"fail_create\":true");
        JsonNode h;
        try (Daemon d = TestDaemon.start(c)) {
            List<Frame> events = new ArrayList<>();
            DaemonSessions.as(d, "root", 0, 0, events).onCommand(Frame.of(3, Code.START_EVENTS.value()));
            int before = events.size();
            assertThat(start(d, "1", "mig=1[profile=1g.10gb]").get(0).code()).isEqualTo(Code.ERROR.value());
            h = health(d, "gpu", "0");
            assertThat(h.path("source").asText()).as(h.toString()).isEqualTo("mig");
            assertThat(h.path("reason").asText()).matches("slice 0:1g\\.10gb@\\d cannot be created: "
                    + "nvmlDeviceCreateGpuInstanceWithPlacement \\(" + MigStub.UUID + ", 1g\\.10gb at \\d\\): .*"
                    + "\\(NVML_ERROR_INSUFFICIENT_RESOURCES\\)");
            JsonNode health = h;
            List<JsonNode> told = new ArrayList<>();
            for (Frame f : events.subList(before, events.size())) {
                told.add(JSON.readTree(f.text(0)));
            }
            assertThat(told).as(told.toString()).anyMatch(e -> e.path("event").asText().equals("taint")
                    && e.path("map").asText().equals("gpu") && e.path("id").asText().equals("0")
                    && e.path("source").asText().equals("mig") && e.path("health").equals(health));
            assertThat(explain(d, "gpu=1")).contains("tainted   mig: slice 0:1g.10gb@");
            assertThat(explain(d, "mig=1[profile=1g.10gb]")).contains("excluded by gpu 0, tainted: mig: slice 0:1g.10gb@")
                    .contains("(" + MigStub.UUID + "): tainted: mig: slice 0:1g.10gb@");
            assertThat(status(d)).containsPattern("\n  0 +free +tainted \\(mig: slice 0:1g\\.10gb@\\d cannot be created: "
                    + ".*NVML_ERROR_INSUFFICIENT_RESOURCES\\), since " + h.path("since").asText() + "\\)\n")
                    .containsPattern("\n  0:7g\\.80gb@0 +blocked by gpu 0 \\(tainted\\) +ok\n");
            assertThat(call(d, Code.RELOAD, null).get(0).code()).isEqualTo(Code.STATE.value());
            assertThat(health(d, "gpu", "0")).as("RELOAD keeps it, as it keeps a drain").isEqualTo(h);
        }
        GpuStub.use(tmp.resolve("nvml.json"), MigStub.description(state, "")); // the card can make slices again
        try (Daemon d = TestDaemon.start(c)) {
            assertThat(health(d, "gpu", "0")).as("journaled: kept across a restart").isEqualTo(h);
            assertThat(start(d, "2", "mig=1[profile=1g.10gb]").get(0).code()).isEqualTo(Code.ERROR.value());
            assertThat(explain(d, "mig=1[profile=1g.10gb]")).contains("excluded by gpu 0, tainted: mig: slice 0:1g.10gb@");
            java.io.StringWriter out = new java.io.StringWriter();
            assertThat(rsmap.cli.Main.run(new java.io.PrintWriter(out), new java.io.PrintWriter(new java.io.StringWriter()),
                    "undrain", "gpu", "0", "--socket", d.socket().toString())).isZero();
            assertThat(out.toString()).isEqualTo("gpu 0: ok\n");
            assertThat(health(d, "gpu", "0").asText()).isEqualTo("ok");
            assertThat(env(granted(d, "3", "gpu=1"), "CUDA_VISIBLE_DEVICES")).isEqualTo(MigStub.UUID);
            ended(d, "3");
            granted(d, "4", "mig=1[profile=1g.10gb]");
            assertThat(slicesInDriver()).hasSize(1);
        }
        try (Daemon d = TestDaemon.start(c)) {
            assertThat(health(d, "gpu", "0").asText()).as("the undrain journaled too").isEqualTo("ok");
        }
    }

    /**
     * Without gpu_map the card has no whole-card instance: a failed creation taints each of its places in
     * mig_map, one taint of one failure, and one undrain of any of them clears them all.
     */
    @Test
    void failedCreation_withoutGpuMap_taintsEveryPlaceOfTheCard_andOneUndrainClearsThemAll() throws Exception {
        Config c = config(",\"fail_create\":true");
        Path conf = tmp.resolve("d").resolve("rsmapd.conf");
        Files.writeString(conf, Files.readString(conf).replaceAll("(?m)^gpu_map = gpu\n", ""));
        try (Daemon d = TestDaemon.start(Config.parse(ConfigText.read(conf), conf, c.host()))) {
            assertThat(start(d, "1", "mig=1[profile=1g.10gb]").get(0).code()).isEqualTo(Code.ERROR.value());
            JsonNode places = query(d).path("maps").path("mig").path("instances");
            assertThat(places.size()).isGreaterThan(7);
            assertThat(places).as(places.toString()).allMatch(i -> i.path("health").path("source").asText().equals("mig"));
            assertThat(call(d, Code.UNDRAIN, "{\"map\":\"mig\",\"id\":\"0:7g.80gb@0\"}").get(0).text(0))
                    .contains("\"changed\":true");
            assertThat(query(d).path("maps").path("mig").path("instances"))
                    .allMatch(i -> i.path("health").asText().equals("ok"));
        }
    }

    /** docs/gpus.md, "One card, one pool": what a held slice or a held card excludes is shown blocked by it. */
    @Test
    void aHeldSlice_blocksItsWholeCardInStatus_aHeldCardItsSlices_theHolderMaskedAsInTheMaps() throws Exception {
        try (Daemon d = TestDaemon.start(config(""))) {
            granted(d, "7", "mig=1[profile=1g.10gb]");
            String slot = query(d).path("jobs").get(0).path("grants").path("node01").path("mig").get(0).asText();
            JsonNode card = query(d).path("maps").path("gpu").path("instances").get(0);
            assertThat(card.path("holder").asText()).isEmpty();
            assertThat(card.path("blocked").toString()).isEqualTo("{\"map\":\"mig\",\"id\":\"" + slot + "\",\"job\":\"7\"}");
            assertThat(status(d)).as("not free").containsPattern("\n  0 +blocked by mig " + slot.replace(".", "\\.")
                    + " \\(job 7\\) +ok\n").doesNotContainPattern("\n  0 +free");
            Session bob = DaemonSessions.as(d, "bob", 1001, 0, new ArrayList<>());
            JsonNode seen = JSON.readTree(bob.onCommand(Frame.of(3, Code.QUERY.value())).get(0).text(0));
            assertThat(seen.path("maps").path("gpu").path("instances").get(0).path("blocked").path("job").asText())
                    .isEqualTo(Views.OTHER);
            ended(d, "7");
            assertThat(query(d).path("maps").path("gpu").path("instances").get(0).has("blocked")).isFalse();
            granted(d, "8", "gpu=1");
            JsonNode slices = query(d).path("maps").path("mig").path("instances");
            assertThat(slices).as(slices.toString()).allMatch(i -> i.path("blocked").toString()
                    .equals("{\"map\":\"gpu\",\"id\":\"0\",\"job\":\"8\"}"));
            assertThat(status(d)).containsPattern("\n  0 +held by job 8 +ok\n")
                    .containsPattern("\n  0:1g\\.10gb@6 +blocked by gpu 0 \\(job 8\\) +ok\n");
        }
    }

    /** The health QUERY shows of {@code map}/{@code id} (its first share). */
    private static JsonNode health(Daemon d, String map, String id) throws Exception {
        for (JsonNode i : query(d).path("maps").path(map).path("instances")) {
            if (i.path("id").asText().equals(id)) {
                return i.path("health");
            }
        }
        throw new AssertionError(map + " has no instance " + id);
    }

    private static String explain(Daemon d, String request) throws Exception {
        return JSON.readTree(call(d, Code.QUERY, "{\"explain\":\"" + request + "\"}").get(0).text(0)).path("explain")
                .path("text").asText();
    }

    /** What rsmap status prints against {@code d}. */
    private static String status(Daemon d) {
        java.io.StringWriter out = new java.io.StringWriter();
        assertThat(rsmap.cli.Main.run(new java.io.PrintWriter(out), new java.io.PrintWriter(new java.io.StringWriter()),
                "status", "--socket", d.socket().toString())).isZero();
        return out.toString();
    }

    @Test
    void adminsStaticSlice_leftAlone_countsAsUsed_orphanOfACrash_destroyedAtStart() throws Exception {
        Config c = config("");
        Files.writeString(state, "{\"instances\":[{\"gpu\":\"" + MigStub.UUID + "\",\"profile\":\"1g.10gb\",\"placement\":6,"
                + "\"gi\":13,\"ci\":0,\"uuid\":\"MIG-admins\"},{\"gpu\":\"" + MigStub.UUID + "\",\"profile\":\"1g.10gb\","
                + "\"placement\":5,\"gi\":14,\"ci\":0,\"uuid\":\"MIG-orphan\"}]}");
        Files.createDirectories(c.stateDir());
        Files.writeString(c.stateDir().resolve("mig.json"), "{\"version\":1,\"slices\":[{\"job\":\"9\",\"id\":"
                + "\"0:1g.10gb@5\",\"card\":\"" + MigStub.UUID + "\",\"profile\":\"1g.10gb\",\"start\":5,\"state\":\"created\","
                + "\"gi\":14,\"ci\":0,\"uuid\":\"MIG-orphan\"}]}");
        try (Daemon d = TestDaemon.start(c)) {
            assertThat(slicesInDriver()).containsExactly("1g.10gb@6=MIG-admins");
            assertThat(start(d, "1", "gpu=1").get(0).code()).isEqualTo(Code.ERROR.value());
            assertThat(start(d, "2", "mig=1[profile=7g.80gb]").get(0).code()).isEqualTo(Code.ERROR.value());
            for (String job : List.of("3", "4", "5")) {
                granted(d, job, "mig=1[profile=2g.20gb]");
            }
            assertThat(slicesInDriver()).hasSize(4).contains("1g.10gb@6=MIG-admins");
        }
    }

    @Test
    void queryKeptAnswer_followsTheSlices_anAdminsNewSliceShowsAfterReconciliation() throws Exception {
        try (Daemon d = TestDaemon.start(config(""))) {
            assertThat(JSON.readTree(call(d, Code.QUERY, "{}").get(0).text(0)).path("mig")).isEmpty(); // kept now
            Files.writeString(state, "{\"instances\":[{\"gpu\":\"" + MigStub.UUID + "\",\"profile\":\"1g.10gb\","
                    + "\"placement\":6,\"gi\":13,\"ci\":0,\"uuid\":\"MIG-admins\"}]}");
            d.reconcile();
            JsonNode mig = JSON.readTree(call(d, Code.QUERY, "{}").get(0).text(0)).path("mig");
            assertThat(mig).as("not the answer kept before the reconciliation").hasSize(1);
            assertThat(mig.get(0).path("state").asText()).isEqualTo("static");
        }
    }

    @Test
    void realloc_growsByASlice_andReleasesIt_theDriverFollows() throws Exception {
        try (Daemon d = TestDaemon.start(config(""))) {
            String first = env(granted(d, "1", "mig=1[profile=1g.10gb]"), "SGE_HGR_mig");
            List<Frame> grow = call(d, Code.REALLOC, "{\"job\":\"1\",\"add\":\"mig=1[profile=1g.10gb]\"}");
            assertThat(grow.get(0).code()).as(grow.toString()).isEqualTo(Code.ALLOC.value());
            assertThat(grow.get(0).text(1)).as("SUCCESS").isEqualTo("0");
            assertThat(slicesInDriver()).hasSize(2);
            JsonNode alloc = JSON.readTree(grow.get(0).text(0));
            assertThat(alloc.path("mig").toString()).as("the added place named by its MIG UUID")
                    .matches("\\{\"0:1g\\.10gb@[0-6]\":\"MIG-[0-9a-f-]+\"\\}");
            JsonNode job = query(d).path("jobs").get(0);
            String both = env(job, "SGE_HGR_mig");
            assertThat(both.split(" ")).hasSize(2).contains(first).allMatch(u -> u.startsWith("MIG-"));
            assertThat(env(job, "CUDA_VISIBLE_DEVICES")).isEqualTo(both.replace(' ', ','));
            String added = job.path("grants").path("node01").path("mig").get(1).asText();
            List<Frame> sub = call(d, Code.REALLOC, "{\"job\":\"1\",\"sub\":\"mig=1\",\"ids\":{\"node01\":{\"mig\":[\""
                    + added + "\"]}}}");
            assertThat(sub.get(0).text(1)).as(sub.toString()).isEqualTo("0");
            assertThat(call(d, Code.RELEASE, "{\"job\":\"1\"}").get(0).code()).isEqualTo(Code.STATE.value());
            assertThat(slicesInDriver()).hasSize(1).allMatch(x -> x.endsWith("=" + first));
        }
    }

    @Test
    void aCheckpointThatIsNotOne_refusesTheStartNamingItsPath() throws Exception {
        Config c = config("");
        Files.createDirectories(c.stateDir());
        Files.writeString(c.stateDir().resolve("mig.json"), "{\"version\":7}");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> TestDaemon.start(c).close())
                .isInstanceOf(java.io.IOException.class)
                .hasMessage(c.stateDir().resolve("mig.json") + ": not a MIG checkpoint of version 1");
    }

    @Test
    void aHandWrittenGpuMap_itsCardByItsNode_excludesTheCardsSlices() throws Exception {
        try (Daemon d = TestDaemon.start(config("", "gpu=1(card0[devices=" + tmp.resolve("dev/nvidia0") + ":rw])"))) {
            granted(d, "1", "mig=1[profile=1g.10gb]");
            assertThat(start(d, "2", "gpu=1").get(0).code()).isEqualTo(Code.ERROR.value());
            call(d, Code.JOB_END, "{\"job\":\"1\"}");
            granted(d, "2", "gpu=1");
            assertThat(start(d, "3", "mig=1[profile=1g.10gb]").get(0).code()).isEqualTo(Code.ERROR.value());
        }
    }

    /** docs/gpus.md: a drained (tainted) card is granted to no new job, whole or as slices; none is created. */
    @Test
    void aDrainedCard_noSliceOfItIsGranted_norCreated_untilUndrained() throws Exception {
        try (Daemon d = TestDaemon.start(config(""))) {
            assertThat(call(d, Code.DRAIN, "{\"map\":\"gpu\",\"id\":\"0\"}").get(0).code()).isEqualTo(Code.STATE.value());
            List<Frame> sliced = start(d, "1", "mig=1[profile=1g.10gb]");
            assertThat(sliced.get(0).code()).as(sliced.toString()).isEqualTo(Code.ERROR.value());
            assertThat(slicesInDriver()).isEmpty();
            assertThat(JSON.readTree(call(d, Code.QUERY, "{\"explain\":\"mig=1[profile=1g.10gb]\"}").get(0).text(0))
                    .path("explain").path("text").asText()).contains("tainted");
            assertThat(call(d, Code.UNDRAIN, "{\"map\":\"gpu\",\"id\":\"0\"}").get(0).code()).isEqualTo(Code.STATE.value());
            granted(d, "2", "mig=1[profile=1g.10gb]");
            assertThat(slicesInDriver()).hasSize(1);
        }
    }

    /**
     * docs/gpus.md: an admin's slice is left alone - also one made after rsmapd last read the card, whose place
     * a job start then tries: the creation fails (the card is tainted, the start refused), and the admin's
     * slice is still there.
     */
    @Test
    void aCreationThatFailsOnAnAdminsNewSlice_leavesThatSliceAlone() throws Exception {
        try (Daemon d = TestDaemon.start(config(""))) {
            Files.writeString(state, "{\"instances\":[{\"gpu\":\"" + MigStub.UUID + "\",\"profile\":\"1g.10gb\","
                    + "\"placement\":6,\"gi\":13,\"ci\":0,\"uuid\":\"MIG-admins\"}]}"); // rsmapd has not looked since
            List<Frame> a = start(d, "1", "mig=1[id=0:1g.10gb@6]");
            assertThat(a.get(0).code()).as(a.toString()).isEqualTo(Code.ERROR.value());
            assertThat(a.get(0).text(0)).contains("cannot be created");
            assertThat(slicesInDriver()).containsExactly("1g.10gb@6=MIG-admins");
        }
    }

    /**
     * A refused RELOAD changes nothing (docs/gpus.md): with mig_map taken out of rsmapd.conf while a job holds
     * a slice, RELOAD is refused, and the card still counts as one pool - its whole-card instance is not
     * granted beside the slice, after a reconciliation too - and the slice is still destroyed at its job's end.
     */
    @Test
    void aRefusedReload_leavesTheSlicesAndTheCardAsTheyWere() throws Exception {
        Config c = config("");
        try (Daemon d = TestDaemon.start(c)) {
            granted(d, "1", "mig=1[profile=1g.10gb]");
            Path conf = tmp.resolve("d").resolve("rsmapd.conf");
            String before = Files.readString(conf);
            Files.writeString(conf, before.replaceAll("(?m)^mig_map = mig\n", ""));
            List<Frame> reload = call(d, Code.RELOAD, null);
            assertThat(reload.get(0).code()).as(reload.toString()).isEqualTo(Code.ERROR.value());
            d.reconcile();
            assertThat(start(d, "2", "gpu=1").get(0).code()).as("the card is still one pool").isEqualTo(Code.ERROR.value());
            assertThat(slicesInDriver()).hasSize(1);
            Files.writeString(conf, before);
            ended(d, "1");
            assertThat(slicesInDriver()).as("destroyed at its job's end").isEmpty();
        }
    }

    @Test
    void aLostCheckpoint_theHeldJobsSliceIsAdoptedByItsUuid_destroyedAtItsEnd_anotherUuidAtThePlaceStaysAnAdmins()
            throws Exception {
        Config c = config("");
        String mine;
        try (Daemon d = TestDaemon.start(c)) {
            mine = env(granted(d, "1", "mig=1[profile=1g.10gb]"), "SGE_HGR_mig");
            env(granted(d, "2", "mig=1[profile=1g.10gb]"), "SGE_HGR_mig");
        }
        assertThat(slicesInDriver()).hasSize(2);
        Files.delete(c.stateDir().resolve("mig.json"));
        // job 2's slice replaced, behind rsmapd's back, by an admin's at the same place: another UUID
        String driver = Files.readString(state);
        String theirs = slicesInDriver().stream().map(x -> x.substring(x.indexOf('=') + 1)).filter(u -> !u.equals(mine))
                .findFirst().orElseThrow();
        Files.writeString(state, driver.replace(theirs, "MIG-admins"));
        try (Daemon d = TestDaemon.start(c)) {
            JsonNode q = query(d);
            int seen = 0;
            for (JsonNode j : q.path("jobs")) {
                if (j.path("job").asText().equals("1")) {
                    seen++;
                    assertThat(env(j, "SGE_HGR_mig")).as("its environment names the UUID again").isEqualTo(mine);
                    assertThat(env(j, "CUDA_VISIBLE_DEVICES")).isEqualTo(mine);
                }
            }
            assertThat(seen).as(q.toString()).isEqualTo(1);
            JsonNode mig = q.path("mig");
            assertThat(mig).as(mig.toString()).hasSize(2);
            for (JsonNode x : mig) {
                if (x.path("uuid").asText().equals(mine)) {
                    assertThat(x.path("job").asText()).as("adopted: job 1's again").isEqualTo("1");
                } else {
                    assertThat(x.path("state").asText()).as("not the UUID job 2 was told").isEqualTo("static");
                }
            }
            ended(d, "1");
            assertThat(slicesInDriver()).as("job 1's slice destroyed at its end, the admin's left")
                    .containsExactly("1g.10gb@" + JSON.readTree(Files.readString(state)).path("instances").get(0)
                            .path("placement").asInt() + "=MIG-admins");
            ended(d, "2");
            assertThat(slicesInDriver()).as("never rsmapd's to destroy").hasSize(1);
        }
    }

    @Test
    void anOlderCheckpointPutBack_itsEntryOfAnEndedJob_neverDestroysTheSliceARunningJobHoldsAtThatGi() throws Exception {
        Config c = config("");
        Path checkpoint = c.stateDir().resolve("mig.json");
        String second;
        try (Daemon d = TestDaemon.start(c)) {
            granted(d, "1", "mig=1[profile=1g.10gb]");
            Path older = tmp.resolve("mig.json.older");
            Files.copy(checkpoint, older);
            ended(d, "1");
            second = env(granted(d, "2", "mig=1[profile=1g.10gb]"), "SGE_HGR_mig"); // the same place and gi
            Files.copy(older, checkpoint, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        try (Daemon d = TestDaemon.start(c)) {
            assertThat(slicesInDriver()).as("job 2's slice, not destroyed for job 1's stale entry").hasSize(1)
                    .allMatch(x -> x.endsWith("=" + second));
            JsonNode q = query(d);
            JsonNode mig = q.path("mig");
            assertThat(mig).hasSize(1);
            assertThat(mig.get(0).path("job").asText()).as(mig.toString()).isEqualTo("2");
            assertThat(env(q.path("jobs").get(0), "SGE_HGR_mig")).as("not job 1's stale UUID").isEqualTo(second);
            assertThat(env(q.path("jobs").get(0), "CUDA_VISIBLE_DEVICES")).isEqualTo(second);
            ended(d, "2");
            assertThat(slicesInDriver()).as("destroyed at job 2's end").isEmpty();
        }
    }

    @Test
    void anOlderCheckpointsOrphan_whoseGiNowHoldsAnAdminsSlice_isDroppedNotDestroyed() throws Exception {
        Config c = config("");
        Path checkpoint = c.stateDir().resolve("mig.json");
        try (Daemon d = TestDaemon.start(c)) {
            granted(d, "1", "mig=1[profile=1g.10gb]");
            Files.copy(checkpoint, tmp.resolve("mig.json.older"));
            ended(d, "1");
        }
        JsonNode old = JSON.readTree(Files.readString(tmp.resolve("mig.json.older"))).path("slices").get(0);
        // behind rsmapd's back an admin made a slice elsewhere that NVML gave the freed gi
        Files.writeString(state, "{\"instances\":[{\"gpu\":\"" + MigStub.UUID + "\",\"profile\":\"1g.10gb\","
                + "\"placement\":" + (old.path("start").asInt() == 0 ? 1 : 0) + ",\"gi\":" + old.path("gi").asInt()
                + ",\"ci\":0,\"uuid\":\"MIG-admins\"}]}");
        Files.copy(tmp.resolve("mig.json.older"), checkpoint, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        try (Daemon d = TestDaemon.start(c)) {
            assertThat(slicesInDriver()).as("the admin's slice at the old entry's gi").hasSize(1)
                    .allMatch(x -> x.endsWith("=MIG-admins"));
            assertThat(JSON.readTree(Files.readString(checkpoint)).path("slices")).as("the stale entry dropped").isEmpty();
        }
    }

    @Test
    void aLostCheckpoint_andAnEnvironmentFileItsOwnerRewrote_theSliceIsAdoptedByTheUuidItsJournalRecordNames()
            throws Exception {
        Config c = config("");
        String mine;
        try (Daemon d = TestDaemon.start(c)) {
            mine = env(granted(d, "1", "mig=1[profile=1g.10gb]"), "SGE_HGR_mig");
        }
        List<String> records = journal(c);
        assertThat(records).as("the start record names the slice's MIG UUID by its place")
                .anyMatch(r -> r.matches(".*\"op\":\"start\".*\"slices\":\\{\"0:1g\\.10gb@[0-6]\":\"" + mine + "\"}.*"));
        Files.delete(c.stateDir().resolve("mig.json"));
        Path told = c.stateDir().resolve("env").resolve("1");
        Files.delete(told); // the job's owner can rewrite it: it is not what the adoption trusts
        Files.writeString(told, "SGE_HGR_mig=MIG-forged\nCUDA_VISIBLE_DEVICES=MIG-forged\n");
        try (Daemon d = TestDaemon.start(c)) {
            JsonNode q = query(d);
            assertThat(q.path("mig")).as(q.toString()).hasSize(1);
            assertThat(q.path("mig").get(0).path("job").asText()).as("adopted by its journal record").isEqualTo("1");
            assertThat(env(q.path("jobs").get(0), "SGE_HGR_mig")).isEqualTo(mine);
            ended(d, "1");
            assertThat(slicesInDriver()).as("destroyed at its end").isEmpty();
        }
    }

    @Test
    void aLostCheckpoint_aPlaceARealloctookAwayAndTheJobHasNotReleased_isAdoptedByItsJournalRecord_destroyedAtTheRelease()
            throws Exception {
        Config c = config("");
        String kept;
        String taken;
        try (Daemon d = TestDaemon.start(c)) {
            kept = env(granted(d, "1", "mig=1[profile=1g.10gb]"), "SGE_HGR_mig");
            List<Frame> grow = call(d, Code.REALLOC, "{\"job\":\"1\",\"add\":\"mig=1[profile=1g.10gb]\"}");
            assertThat(grow.get(0).text(1)).as(grow.toString()).isEqualTo("0");
            JsonNode job = query(d).path("jobs").get(0);
            String added = job.path("grants").path("node01").path("mig").get(1).asText();
            taken = env(job, "SGE_HGR_mig").replace(kept, "").strip();
            List<Frame> sub = call(d, Code.REALLOC, "{\"job\":\"1\",\"sub\":\"mig=1\",\"ids\":{\"node01\":{\"mig\":[\""
                    + added + "\"]}}}");
            assertThat(sub.get(0).text(1)).as(sub.toString()).isEqualTo("0");
        }
        assertThat(slicesInDriver()).as("taken away, not released: still the job's").hasSize(2);
        Files.delete(c.stateDir().resolve("mig.json"));
        try (Daemon d = TestDaemon.start(c)) {
            JsonNode mig = query(d).path("mig");
            assertThat(mig).as(mig.toString()).hasSize(2).allMatch(x -> x.path("job").asText().equals("1"));
            assertThat(call(d, Code.RELEASE, "{\"job\":\"1\"}").get(0).code()).isEqualTo(Code.STATE.value());
            assertThat(slicesInDriver()).as("the taken-away slice destroyed at the release").hasSize(1)
                    .allMatch(x -> x.endsWith("=" + kept)).noneMatch(x -> x.endsWith("=" + taken));
            ended(d, "1");
            assertThat(slicesInDriver()).as("the other at the job's end").isEmpty();
        }
    }

    @Test
    void aLostCheckpoint_aJournalOfAnEarlierBuildWithoutSlices_adoptsByTheEnvironmentFile() throws Exception {
        Config c = config("");
        String mine;
        try (Daemon d = TestDaemon.start(c)) {
            mine = env(granted(d, "1", "mig=1[profile=1g.10gb]"), "SGE_HGR_mig");
        }
        asAnEarlierBuildWroteIt(c);
        assertThat(journal(c)).noneMatch(r -> r.contains("\"slices\":{"));
        Files.delete(c.stateDir().resolve("mig.json"));
        try (Daemon d = TestDaemon.start(c)) {
            JsonNode mig = query(d).path("mig");
            assertThat(mig).as(mig.toString()).hasSize(1);
            assertThat(mig.get(0).path("job").asText()).as("adopted by the UUID its environment file names").isEqualTo("1");
            assertThat(mig.get(0).path("uuid").asText()).isEqualTo(mine);
            ended(d, "1");
            assertThat(slicesInDriver()).isEmpty();
        }
    }

    @Test
    void aLostCheckpoint_aGrowWhoseCreationFailed_itsPlaceAdoptsNothing_notEvenAUuidTheEnvironmentFileNames()
            throws Exception {
        Config c = config("");
        String mine;
        String failed;
        try (Daemon d = TestDaemon.start(c)) {
            mine = env(granted(d, "1", "mig=1[profile=1g.10gb]"), "SGE_HGR_mig");
            GpuStub.use(tmp.resolve("nvml.json"), MigStub.description(state, ",\"fail_create\":true"));
            List<Frame> grow = call(d, Code.REALLOC, "{\"job\":\"1\",\"add\":\"mig=1[profile=1g.10gb]\"}");
            assertThat(grow.get(0).text(1)).as(grow.toString()).isEqualTo("0");
            GpuStub.use(tmp.resolve("nvml.json"), MigStub.description(state, ""));
            failed = query(d).path("jobs").get(0).path("grants")
                    .path("node01").path("mig").get(1).asText();
        }
        assertThat(slicesInDriver()).as("the grow's creation failed").hasSize(1);
        assertThat(journal(c)).as("its record names the place with no slice")
                .anyMatch(r -> r.contains("\"op\":\"change\"") && r.contains("\"" + failed + "\":\"\""));
        Files.delete(c.stateDir().resolve("mig.json"));
        // an admin made a slice at that place since, and the job's owner wrote its UUID into the job's file
        JsonNode driver = JSON.readTree(Files.readString(state));
        int start = MigSlot.parse(failed).orElseThrow().start();
        Files.writeString(state, "{\"instances\":[" + driver.path("instances").get(0) + ",{\"gpu\":\"" + MigStub.UUID
                + "\",\"profile\":\"1g.10gb\",\"placement\":" + start + ",\"gi\":9,\"ci\":0,\"uuid\":\"MIG-admins\"}]}");
        Path told = c.stateDir().resolve("env").resolve("1");
        Files.delete(told);
        Files.writeString(told, "SGE_HGR_mig=" + mine + " MIG-admins\n");
        try (Daemon d = TestDaemon.start(c)) {
            JsonNode mig = query(d).path("mig");
            assertThat(mig).as(mig.toString()).hasSize(2);
            for (JsonNode x : mig) {
                assertThat(x.path("job").asText()).as(x.toString()).isEqualTo(x.path("uuid").asText().equals(mine) ? "1" : "");
            }
            ended(d, "1");
            assertThat(slicesInDriver()).as("the admin's slice is never the job's to destroy")
                    .containsExactly("1g.10gb@" + start + "=MIG-admins");
        }
    }

    @Test
    void anOlderCheckpointPutBack_whoseEntryOfTheSameJobIsStillAnIntent_neverDestroysTheSliceItsJournalRecordNames()
            throws Exception {
        Config c = config("");
        Path checkpoint = c.stateDir().resolve("mig.json");
        String mine;
        try (Daemon d = TestDaemon.start(c)) {
            mine = env(granted(d, "1", "mig=1[profile=1g.10gb]"), "SGE_HGR_mig");
        }
        // the copy taken while the slice was being made: an intent, no gi, no UUID
        com.fasterxml.jackson.databind.node.ObjectNode older = (com.fasterxml.jackson.databind.node.ObjectNode)
                JSON.readTree(Files.readString(checkpoint));
        ((com.fasterxml.jackson.databind.node.ObjectNode) older.path("slices").get(0)).put("state", "creating")
                .put("gi", -1).put("ci", -1).put("uuid", "");
        Files.writeString(checkpoint, older.toString());
        try (Daemon d = TestDaemon.start(c)) {
            assertThat(slicesInDriver()).as("the running job's slice").hasSize(1).allMatch(x -> x.endsWith("=" + mine));
            JsonNode mig = query(d).path("mig");
            assertThat(mig.get(0).path("job").asText()).as(mig.toString()).isEqualTo("1");
            assertThat(mig.get(0).path("state").asText()).isEqualTo("created");
            ended(d, "1");
            assertThat(slicesInDriver()).isEmpty();
        }
    }

    @Test
    void anOlderCheckpointPutBack_namingAnEarlierUuidOfTheSameJobsPlace_isDropped_theJournalsUuidKeptAndAdopted()
            throws Exception {
        Config c = config("");
        Path checkpoint = c.stateDir().resolve("mig.json");
        String mine;
        try (Daemon d = TestDaemon.start(c)) {
            mine = env(granted(d, "1", "mig=1[profile=1g.10gb]"), "SGE_HGR_mig");
            granted(d, "2", "mig=1[profile=1g.10gb]"); // an ended job: the next start-up compacts the journal
            ended(d, "2");
        }
        assertThat(journal(c)).hasSize(4);
        Files.writeString(checkpoint, Files.readString(checkpoint).replace(mine, "MIG-older"));
        for (int round = 0; round < 2; round++) { // compacted by the first start-up, read again by the second
            try (Daemon d = TestDaemon.start(c)) {
                JsonNode q = query(d);
                assertThat(q.path("mig").get(0).path("uuid").asText()).as(q.toString()).isEqualTo(mine);
                assertThat(q.path("mig").get(0).path("job").asText()).isEqualTo("1");
                assertThat(env(q.path("jobs").get(0), "SGE_HGR_mig")).isEqualTo(mine);
            }
            assertThat(journal(c)).as("compacted, the journal still names the job's slice").hasSize(2)
                    .anyMatch(r -> r.contains("\"op\":\"start\"") && r.contains(":\"" + mine + "\"}"))
                    .noneMatch(r -> r.contains("MIG-older"));
        }
        try (Daemon d = TestDaemon.start(c)) {
            ended(d, "1");
            assertThat(slicesInDriver()).isEmpty();
        }
    }

    @Test
    void anEarlierBuildsJournal_adoptedOnceFromTheEnvironmentFile_staysTheJobsThroughTheNextRestarts() throws Exception {
        Config c = config("");
        String mine;
        try (Daemon d = TestDaemon.start(c)) {
            mine = env(granted(d, "1", "mig=1[profile=1g.10gb]"), "SGE_HGR_mig");
            granted(d, "2", "mig=1[profile=1g.10gb]"); // an ended job: the next start-up compacts the journal
            ended(d, "2");
        }
        asAnEarlierBuildWroteIt(c);
        Files.delete(c.stateDir().resolve("mig.json"));
        for (int round = 0; round < 3; round++) { // adopted from the file; then with mig.json, twice
            try (Daemon d = TestDaemon.start(c)) {
                JsonNode mig = query(d).path("mig");
                assertThat(mig).as(round + ": " + mig).hasSize(1);
                assertThat(mig.get(0).path("job").asText()).as(round + ": " + mig).isEqualTo("1");
            }
            assertThat(journal(c)).as("the compaction writes no slices the records did not name")
                    .noneMatch(r -> r.contains("\"slices\":{"));
        }
        try (Daemon d = TestDaemon.start(c)) {
            ended(d, "1");
            assertThat(slicesInDriver()).as("destroyed at its end").isEmpty();
        }
    }

    @Test
    void afterARestart_aSliceReleasedAndMadeAgainAtItsPlace_isJournaledByItsNewUuid() throws Exception {
        Config c = config("");
        String first;
        String place;
        try (Daemon d = TestDaemon.start(c)) {
            first = env(granted(d, "1", "mig=1[profile=1g.10gb]"), "SGE_HGR_mig");
            List<Frame> grow = call(d, Code.REALLOC, "{\"job\":\"1\",\"add\":\"mig=1[profile=1g.10gb]\"}");
            assertThat(grow.get(0).text(1)).as(grow.toString()).isEqualTo("0");
            place = query(d).path("jobs").get(0).path("grants")
                    .path("node01").path("mig").get(1).asText();
        }
        String again;
        try (Daemon d = TestDaemon.start(c)) { // the journal's UUIDs read again at this start-up
            List<Frame> sub = call(d, Code.REALLOC, "{\"job\":\"1\",\"sub\":\"mig=1\",\"ids\":{\"node01\":{\"mig\":[\""
                    + place + "\"]}}}");
            assertThat(sub.get(0).text(1)).as(sub.toString()).isEqualTo("0");
            assertThat(call(d, Code.RELEASE, "{\"job\":\"1\"}").get(0).code()).isEqualTo(Code.STATE.value());
            List<Frame> grow = call(d, Code.REALLOC, "{\"job\":\"1\",\"add\":\"mig=1[profile=1g.10gb]\"}");
            assertThat(grow.get(0).text(1)).as(grow.toString()).isEqualTo("0");
            JsonNode alloc = JSON.readTree(grow.get(0).text(0)).path("mig");
            assertThat(alloc.has(place)).as("made again at the same place: " + alloc).isTrue();
            again = alloc.path(place).asText();
        }
        List<String> records = journal(c);
        assertThat(records.get(records.size() - 1)).as("the last change names the new slice")
                .contains("\"" + place + "\":\"" + again + "\"").contains(first);
        Files.delete(c.stateDir().resolve("mig.json"));
        try (Daemon d = TestDaemon.start(c)) {
            JsonNode mig = query(d).path("mig");
            assertThat(mig).as(mig.toString()).hasSize(2).allMatch(x -> x.path("job").asText().equals("1"));
            ended(d, "1");
            assertThat(slicesInDriver()).isEmpty();
        }
    }

    private static JsonNode query(Daemon d) throws Exception {
        return JSON.readTree(call(d, Code.QUERY, null).get(0).text(0));
    }

    private static void ended(Daemon d, String job) {
        assertThat(call(d, Code.JOB_END, "{\"job\":\"" + job + "\"}").get(0).code()).isEqualTo(Code.OK.value());
    }

    /** The journal as a build before the records' slices wrote it: the same records without them. */
    private static void asAnEarlierBuildWroteIt(Config c) throws Exception {
        List<String> earlier = new ArrayList<>();
        for (String r : journal(c)) {
            com.fasterxml.jackson.databind.node.ObjectNode o = (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(r);
            o.remove("slices");
            earlier.add(o.toString());
        }
        try (rsmap.journal.Journal j = rsmap.journal.Journal.open(c.stateDir().resolve("journal"))) {
            j.compact(earlier);
        }
    }

    private static List<String> journal(Config c) throws Exception {
        try (rsmap.journal.Journal j = rsmap.journal.Journal.open(c.stateDir().resolve("journal"))) {
            return j.replayed();
        }
    }
}
