// rsmapd over its real socket: every command of the agent protocol (the PTP proxy protocol) - JOB_START and
// JOB_END with the journal, QUERY, MODEL_DEF, START_EVENTS / STOP_EVENTS, LIST_FILTERS / SET_FILTERS,
// QUIT, RELOAD - and reconciliation against execd's active_jobs.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.wire.Category;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

@Timeout(60)
class DaemonTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;
    Config config;
    Daemon daemon;

    @BeforeEach
    void start() throws Exception {
        Files.createDirectories(tmp.resolve("spool/active_jobs"));
        config = TestDaemon.config(tmp, "gpu=8(0 0 0 0 1 1 1 1),nic=2(ib0[numa_node=0] ib1[numa_node=1])",
                "global_complex_values = lic=2(la lb)", "reconcile_interval = 0");
        daemon = TestDaemon.start(config);
    }

    @AfterEach
    void stop() throws Exception {
        daemon.close();
    }

    static Frame json(long tid, Code code, String json) {
        return Frame.of(tid, code.value(), json);
    }

    private TestClient client() throws Exception {
        TestClient c = new TestClient(config.socket());
        assertThat(c.call(Frame.of(1, Code.INIT.value(), Session.VERSION))).containsExactly(Session.ok(1));
        return c;
    }

    private static String start(String job, String user, String request) {
        return "{\"job\":\"" + job + "\",\"task\":\"undefined\",\"user\":\"" + user + "\",\"slots\":1,\"request\":\""
                + request + "\"}";
    }

    @Test
    void jobStart_grantsAndAnswersTheEnvironment_jobEndGivesBack() throws Exception {
        try (TestClient c = client()) {
            List<Frame> start = c.call(json(2, Code.JOB_START, "{\"job\":\"7\",\"task\":\"1\",\"user\":\"alice\","
                    + "\"slots\":1,\"request\":\"gpu=4[same=id],lic=1\"}"));
            assertThat(start).hasSize(2);
            assertThat(start.get(0).args()).hasSize(3);
            assertThat(start.get(0).text(1)).isEqualTo("SGE_HGR_gpu=0 0 0 0");
            assertThat(start.get(0).text(2)).isEqualTo("SGE_HGR_lic=la");
            assertThat(start.get(0).text(0)).isEqualTo("{\"job\":\"7.1\",\"user\":\"alice\",\"request\":"
                    + "\"gpu=4[same=id],lic=1\",\"slots\":1,\"grants\":{\"node01\":{\"gpu\":[\"0\",\"0\",\"0\",\"0\"]},"
                    + "\"global\":{\"lic\":[\"la\"]}},\"env\":{\"SGE_HGR_gpu\":\"0 0 0 0\",\"SGE_HGR_lic\":\"la\"}}");
            assertThat(start.get(1)).isEqualTo(Session.ok(2));
            assertThat(c.call(json(3, Code.JOB_START, start("7", "alice", "gpu=1").replace("undefined", "1"))))
                    .containsExactly(Session.error(3, "job 7.1 already holds {node01={gpu=[0, 0, 0, 0]}, global={lic=[la]}};"
                            + " a second JOB_START is refused (no doubled grants)", Category.BUSY));
            assertThat(c.call(json(4, Code.JOB_END, "{\"job\":\"7\",\"task\":\"1\"}"))).containsExactly(Session.ok(4));
            // a JOB_END retried after a lost answer succeeds (nothing left to free).
            assertThat(c.call(json(5, Code.JOB_END, "{\"job\":\"7\",\"task\":\"1\"}"))).containsExactly(
                    Session.ok(5));
        }
    }

    @Test
    void jobStart_cannotBeGranted_isAnErrorWithTheReason_andLeavesNothing() throws Exception {
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, "{\"job\":\"1\",\"request\":\"gpu=1\"}"));
            c.call(json(3, Code.JOB_START, "{\"job\":\"2\",\"request\":\"gpu=1[id=1]\"}"));
            assertThat(c.call(json(4, Code.JOB_START, "{\"job\":\"3\",\"request\":\"gpu=4[same=id]\"}")))
                    .containsExactly(Session.error(4, "job 3 cannot be granted now: gpu: no group large enough: needs 4 "
                            + "free instances agreeing on id, the largest group (0) has 3", Category.BUSY));
            assertThat(c.call(json(5, Code.JOB_START, "{\"job\":\"4\",\"request\":\"gpu=1[scope=job]\"}")))
                    .containsExactly(Session.error(5, "request: column 7: scope= needs same=", Category.REFUSED));
            assertThat(daemon.cluster().runningJobs()).containsExactly("1", "2");
        }
    }

    @Test
    void restart_restoresTheGrantsExactly_evenAfterEarlierJobsEnded_andCompactsTheJournal() throws Exception {
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, start("1", "alice", "gpu=4[same=id]")));  // takes the 0s
            c.call(json(3, Code.JOB_START, start("2", "bob", "gpu=2[same=id]")));    // takes two 1s
            c.call(json(4, Code.JOB_START, start("3", "bob", "gpu=2,lic=1")));
            c.call(json(5, Code.JOB_END, "{\"job\":\"1\"}"));
            c.call(json(6, Code.JOB_START, start("4", "carol", "nic=1[numa_node=1]")));
        }
        String before = query();
        daemon.close();
        daemon = TestDaemon.start(config);
        // Deciding job 2 again on an empty host would give it the 0s; its grant is kept instead.
        assertThat(query()).isEqualTo(before);
        assertThat(daemon.cluster().runningJobs()).containsExactly("2", "3", "4");
        List<String> journal = Files.readAllLines(config.stateDir().resolve("journal"));
        assertThat(journal).hasSize(4); // the configuration and one line per held grant
        assertThat(journal.get(0)).contains("\"op\":\"config\"", "\"generation\":1");
        // Already compact: the next start leaves the file as it is (no rewrite, no extra fsync).
        byte[] compact = Files.readAllBytes(config.stateDir().resolve("journal"));
        long modified = Files.getLastModifiedTime(config.stateDir().resolve("journal")).toMillis();
        Thread.sleep(20); // a rewrite now would change the file's modification time, which is compared below
        daemon.close();
        daemon = TestDaemon.start(config);
        assertThat(Files.readAllBytes(config.stateDir().resolve("journal"))).isEqualTo(compact);
        assertThat(Files.getLastModifiedTime(config.stateDir().resolve("journal")).toMillis()).isEqualTo(modified);
        assertThat(query()).isEqualTo(before);
    }

    @Test
    void badArguments_areErrors() throws Exception {
        try (TestClient c = client()) {
            assertThat(c.call(json(2, Code.JOB_START, "not json")).get(0).text(0)).startsWith("the argument is not JSON");
            assertThat(c.call(json(3, Code.JOB_START, "{\"job\":\"../x\",\"request\":\"gpu=1\"}")).get(0).text(0))
                    .startsWith("\"job\" is missing or not a job id");
            assertThat(c.call(Frame.of(4, Code.JOB_END.value())).get(0).text(0)).isEqualTo("expected one JSON argument, got 0");
            assertThat(c.call(json(5, Code.JOB_START, "{\"job\":\"5\",\"task\":\"x/y\",\"request\":\"gpu=1\"}")).get(0)
                    .text(0)).isEqualTo("\"task\" is a task number or \"undefined\", not 'x/y'");
            assertThat(c.call(json(6, Code.MODEL_DEF, "{}")).get(0).text(0)).isEqualTo("expected no argument, got 1");
            assertThat(c.call(json(7, Code.QUERY, "{\"job\":\"99\"}"))).containsExactly(
                    Session.error(7, "job 99 holds nothing on node01", Category.REFUSED));
            // invalid UTF-8 inside a JSON string: refused, not read as U+FFFD
            byte[] bad = "{\"job\":\"5\",\"user\":\"\u00ff\",\"request\":\"gpu=1\"}".getBytes(
                    java.nio.charset.StandardCharsets.ISO_8859_1);
            assertThat(c.call(new Frame(8, Code.JOB_START.value(), java.util.List.of(bad)))).containsExactly(
                    Session.error(8, "the argument is not valid UTF-8", Category.MALFORMED));
        }
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void query_showsMapsInstancesHoldersCharacteristicsJobsAndReservations() throws Exception {
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, start("7", "alice", "nic=1[numa_node=1]")));
            JsonNode q = JSON.readTree(c.call(Frame.of(3, Code.QUERY.value())).get(0).text(0));
            assertThat(q.path("host").asText()).isEqualTo("node01");
            assertThat(q.path("generation").asInt()).isEqualTo(1);
            assertThat(q.path("maps").path("nic").toString()).isEqualTo("{\"amount\":2,\"instances\":[{\"id\":\"ib0\","
                    + "\"holder\":\"\",\"numa_node\":\"0\",\"health\":\"ok\"},{\"id\":\"ib1\",\"holder\":\"7\",\"numa_node\":\"1\",\"health\":\"ok\"}]}");
            assertThat(q.path("jobs").get(0).path("job").asText()).isEqualTo("7");
            assertThat(q.path("reservations").isArray()).isTrue();
            JsonNode one = JSON.readTree(c.call(json(4, Code.QUERY, "{\"job\":\"7\"}")).get(0).text(0));
            assertThat(one.path("jobs")).hasSize(1);
        }
    }

    @Test
    void query_answeredFromItsCache_alwaysShowsTheLatestChange() throws Exception {
        try (TestClient c = client()) {
            for (int i = 0; i < 3; i++) {
                assertThat(JSON.readTree(c.call(Frame.of(2, Code.QUERY.value())).get(0).text(0)).path("jobs")).hasSize(i);
                c.call(json(3, Code.JOB_START, start("j" + i, "alice", "gpu=1")));
            }
            c.call(json(4, Code.JOB_END, "{\"job\":\"j0\"}"));
            assertThat(JSON.readTree(c.call(Frame.of(5, Code.QUERY.value())).get(0).text(0)).path("jobs")).hasSize(2);
            daemon.reconcile(); // nothing to release here: the cache stays right
            assertThat(JSON.readTree(c.call(Frame.of(6, Code.QUERY.value())).get(0).text(0)).path("jobs")).hasSize(2);
        }
    }

    @Test
    void modelDef_describesHostMapsInstancesCharacteristicsAndJobFields_thenOk() throws Exception {
        try (TestClient c = client()) {
            List<Frame> defs = c.call(Frame.of(2, Code.MODEL_DEF.value()));
            assertThat(defs.get(defs.size() - 1)).isEqualTo(Session.ok(2));
            Set<Integer> ids = new HashSet<>();
            List<String> names = new ArrayList<>();
            List<Frame> attrs = defs.stream().filter(f -> f.code() == Code.ATTR_DEF.value()).toList();
            List<Frame> launch = defs.stream().filter(f -> f.code() == Code.LAUNCH_DEF.value()).toList();
            List<Frame> elements = defs.stream().filter(f -> f.code() == Code.ELEMENT_DEF.value()).toList();
            // the PTP proxy protocol: a series of ATTR_DEF, LAUNCH_DEF and ELEMENT_DEF events, terminated by OK
            assertThat(defs).hasSize(attrs.size() + launch.size() + elements.size() + 1);
            assertThat(defs.subList(0, attrs.size())).isEqualTo(attrs);
            assertThat(launch).hasSize(1);
            assertThat(defs.get(attrs.size())).isEqualTo(launch.get(0));
            // host, two maps of this host, the global host's map; 8 + 2 + 2 instances
            assertThat(elements).hasSize(1 + 3 + 12);
            JsonNode ib1 = JSON.readTree(elements.get(1 + 1 + 8 + 1 + 1).text(0));
            assertThat(ib1.path("element").asText()).isEqualTo("instance");
            assertThat(ib1.path("map").asText()).isEqualTo("nic");
            assertThat(ib1.path("index").asInt()).isEqualTo(1);
            for (Frame f : attrs) {
                JsonNode a = JSON.readTree(f.text(0));
                assertThat(a.fieldNames()).toIterable().containsExactly("id", "name", "type", "short", "long", "min",
                        "max", "default", "values");
                assertThat(ids.add(a.path("id").asInt())).as("unique id").isTrue();
                names.add(a.path("name").asText());
                if (a.path("name").asText().equals("map.nic.numa_node")) {
                    assertThat(a.path("type").asText()).isEqualTo("INT");
                    assertThat(a.path("min").asText()).isEqualTo("0");
                    assertThat(a.path("max").asText()).isEqualTo("1");
                }
                if (a.path("name").asText().equals("map.gpu.id")) {
                    assertThat(a.path("values").toString()).isEqualTo("[\"0\",\"1\"]");
                }
                if (a.path("name").asText().equals("map.gpu.amount")) {
                    assertThat(a.path("max").asInt()).isEqualTo(8);
                }
            }
            assertThat(names).contains("host.name", "map.gpu.amount", "map.gpu.id", "map.nic.numa_node", "map.lic.id",
                    "job.id", "job.user", "job.request", "job.grants", "job.env");
            // The names persist across runs: the same model again, the same names and ids.
            List<Frame> again = c.call(Frame.of(3, Code.MODEL_DEF.value()));
            assertThat(again.stream().map(f -> f.args().isEmpty() ? "" : f.text(0)).toList())
                    .isEqualTo(defs.stream().map(f -> f.args().isEmpty() ? "" : f.text(0)).toList());
        }
    }

    @Test
    void startEvents_fullStateThenDiffs_stopEndsTheStreamWithOkForStartThenForStop() throws Exception {
        try (TestClient watcher = client(); TestClient actor = client()) {
            watcher.send(Frame.of(5, Code.START_EVENTS.value()).encode());
            Frame state = watcher.next();
            assertThat(state.tid()).isEqualTo(5);
            assertThat(state.code()).isEqualTo(Code.STATE.value());
            assertThat(JSON.readTree(state.text(0)).path("jobs")).isEmpty();
            actor.call(json(2, Code.JOB_START, start("7", "alice", "gpu=2[same=id]")));
            Frame grant = watcher.next();
            assertThat(grant.tid()).isEqualTo(5);
            assertThat(grant.code()).isEqualTo(Code.DIFF.value());
            assertThat(JSON.readTree(grant.text(0)).path("event").asText()).isEqualTo("grant");
            assertThat(JSON.readTree(grant.text(0)).path("grants").toString()).isEqualTo("{\"node01\":{\"gpu\":[\"0\",\"0\"]}}");
            actor.call(json(3, Code.JOB_END, "{\"job\":\"7\"}"));
            JsonNode release = JSON.readTree(watcher.next().text(0));
            assertThat(release.path("event").asText()).isEqualTo("release");
            assertThat(release.path("why").asText()).isEqualTo("epilog");
            assertThat(watcher.call(Frame.of(6, Code.START_EVENTS.value()))).containsExactly(Session.error(6,
                    "an event stream is already open (TID 5); STOP_EVENTS first", Category.REFUSED));
            watcher.send(Frame.of(7, Code.STOP_EVENTS.value()).encode());
            assertThat(watcher.next()).isEqualTo(Session.ok(5));
            assertThat(watcher.next()).isEqualTo(Session.ok(7));
            actor.call(json(4, Code.JOB_START, start("8", "alice", "gpu=1")));
            assertThat(watcher.call(Frame.of(8, Code.STOP_EVENTS.value()))).containsExactly(
                    Session.error(8, "no event stream is open", Category.REFUSED));
        }
    }

    @Test
    void filters_limitTheStream_byMapJobUserAndKind_andAreListed() throws Exception {
        try (TestClient watcher = client(); TestClient actor = client()) {
            assertThat(watcher.call(json(2, Code.SET_FILTERS, "{\"map\":[\"nic\"],\"event\":[\"grant\"]}")))
                    .containsExactly(Session.ok(2));
            List<Frame> listed = watcher.call(Frame.of(3, Code.LIST_FILTERS.value()));
            assertThat(listed).hasSize(2);
            assertThat(listed.get(0).code()).isEqualTo(Code.FILTERS.value());
            JsonNode f = JSON.readTree(listed.get(0).text(0));
            assertThat(f.path("filters").toString()).isEqualTo("{\"map\":[\"nic\"],\"job\":[],\"user\":[],\"event\":[\"grant\"]}");
            assertThat(f.path("keys").path("map").toString()).isEqualTo("[\"gpu\",\"nic\"]");
            assertThat(f.path("keys").path("event").toString()).isEqualTo("[\"grant\",\"release\",\"config\",\"alloc\",\"resource-update\",\"free\",\"taint\",\"untaint\"]");
            watcher.send(Frame.of(4, Code.START_EVENTS.value()).encode());
            JsonNode state = JSON.readTree(watcher.next().text(0));
            assertThat(state.path("maps").fieldNames()).toIterable().containsExactly("nic");
            actor.call(json(2, Code.JOB_START, start("1", "alice", "gpu=1")));         // other map: filtered
            actor.call(json(3, Code.JOB_START, start("2", "bob", "nic=1")));           // passes
            actor.call(json(4, Code.JOB_END, "{\"job\":\"2\"}"));                       // a release: filtered
            actor.call(json(5, Code.JOB_START, start("3", "carol", "nic=1")));         // passes
            assertThat(JSON.readTree(watcher.next().text(0)).path("job").asText()).isEqualTo("2");
            assertThat(JSON.readTree(watcher.next().text(0)).path("job").asText()).isEqualTo("3");
            assertThat(watcher.call(json(5, Code.SET_FILTERS, "{\"colour\":[\"red\"]}")).get(0).text(0))
                    .isEqualTo("unknown filter 'colour' (map, job, user, event)");
            assertThat(watcher.call(json(6, Code.SET_FILTERS, "{\"event\":[\"boom\"]}")).get(0).text(0))
                    .isEqualTo("filter 'event': unknown kind 'boom' (grant, release, config, alloc, resource-update, free, taint, untaint)");
            assertThat(watcher.call(json(7, Code.SET_FILTERS, "{\"user\":\"bob\"}")).get(0).text(0))
                    .isEqualTo("filter 'user' is a list of strings");
            assertThat(watcher.call(json(8, Code.SET_FILTERS, "{\"user\":[\"bob\"]}"))).containsExactly(Session.ok(8));
            actor.call(json(6, Code.JOB_START, start("4", "carol", "nic=1")));         // carol: filtered
            actor.call(json(7, Code.JOB_END, "{\"job\":\"3\"}"));
            actor.call(json(8, Code.JOB_START, start("5", "bob", "gpu=1")));           // bob, any map now
            assertThat(JSON.readTree(watcher.next().text(0)).path("job").asText()).isEqualTo("5");
        }
    }

    @Test
    void quit_endsTheStreamFirst_thenIsOk_andCloses() throws Exception {
        try (TestClient watcher = client()) {
            watcher.send(Frame.of(4, Code.START_EVENTS.value()).encode());
            assertThat(watcher.next().code()).isEqualTo(Code.STATE.value());
            watcher.send(Frame.of(5, Code.QUIT.value()).encode());
            assertThat(watcher.next()).isEqualTo(Session.ok(4));
            assertThat(watcher.next()).isEqualTo(Session.ok(5));
            assertThat(watcher.next()).isNull();
        }
    }

    @Test
    void reload_addsInstances_refusesToRemoveAHeldOne_andTheGenerationSurvivesARestart() throws Exception {
        Path conf = tmp.resolve("rsmapd.conf");
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, start("7", "alice", "nic=1[numa_node=1]")));
            String text = Files.readString(conf);
            Files.writeString(conf, text.replace("ib1[numa_node=1])", "ib1[numa_node=1] ib2[numa_node=1])")
                    .replace("nic=2(", "nic=3("));
            List<Frame> ok = c.call(Frame.of(3, Code.RELOAD.value()));
            assertThat(ok.get(1)).isEqualTo(Session.ok(3));
            assertThat(ok.get(0).text(0)).isEqualTo("{\"generation\":2,\"changed\":true}");
            Files.writeString(conf, text.replace(",nic=2(ib0[numa_node=0] ib1[numa_node=1])", ",nic=1(ib0[numa_node=0])"));
            String before = query();
            assertThat(c.call(Frame.of(4, Code.RELOAD.value()))).containsExactly(Session.error(4, "the new configuration"
                    + " would take away what running job 7 holds: host node01 has no map nic any more".replace(
                    "host node01 has no map nic any more", "node01/nic has no free instance ib1 for job 7"), Category.REFUSED));
            assertThat(query()).isEqualTo(before);
            Files.writeString(conf, text.replace("complexes = complexes", "complexes = complexes\nbogus = 1"));
            assertThat(c.call(Frame.of(5, Code.RELOAD.value())).get(0).text(0)).startsWith(conf + ": line 2");
            Files.writeString(conf, text.replace("ib1[numa_node=1])", "ib1[numa_node=1] ib2[numa_node=1])")
                    .replace("nic=2(", "nic=3("));
        }
        daemon.close();
        config = Config.parse(Files.readString(conf), conf, "node01"); // what the file says now
        daemon = TestDaemon.start(config);
        JsonNode q = JSON.readTree(query());
        assertThat(q.path("generation").asInt()).isEqualTo(2);
        assertThat(q.path("maps").path("nic").path("amount").asInt()).isEqualTo(3);
        assertThat(q.path("maps").path("nic").path("instances").get(1).path("holder").asText()).isEqualTo("7");
    }

    @Test
    void reconciliation_releasesJobsWhoseSpoolDirectoryIsGone_andLogsIt() throws Exception {
        daemon.close();
        config = TestDaemon.config(tmp.resolve("r"), "gpu=2(0 1)", "execd_spool = spool", "reconcile_interval = 0");
        Path active = tmp.resolve("r/spool/active_jobs");
        Files.createDirectories(active.resolve("7.1"));
        Files.createDirectories(active.resolve("8.2"));
        daemon = TestDaemon.start(config);
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, start("7", "alice", "gpu=1")));
            c.call(json(3, Code.JOB_START, "{\"job\":\"8\",\"task\":\"2\",\"request\":\"gpu=1\"}"));
        }
        Files.delete(active.resolve("7.1")); // execd cleaned up a job whose epilog never ran
        daemon.reconcile();
        assertThat(daemon.cluster().runningJobs()).containsExactly("8.2");
        assertThat(daemon.log()).contains("released job 7 (its spool directory active_jobs/7.1 is gone)");
        // A restart sees it too: the release is in the journal.
        daemon.close();
        daemon = TestDaemon.start(config);
        assertThat(daemon.cluster().runningJobs()).containsExactly("8.2");
    }

    /** A session of another user, as the kernel would name it, talking to the daemon directly. */
    private Session as(String user, long pid, List<Frame> events) {
        Session s = new Session((code, command, session) -> daemon.handle(code, command, session),
                new Session.Peer(user, user, 1001, 1001, pid));
        s.attach((frame, force) -> events.add(frame));
        s.onCommand(Frame.of(1, Code.INIT.value(), Session.VERSION));
        return s;
    }

    @Test
    void aJobOwner_seesAndEntersOnlyItsOwnJobs_andMayNotStartEndOrReload() throws Exception {
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, start("7", "alice", "nic=1[numa_node=0]")));
            c.call(json(3, Code.JOB_START, start("8", "bob", "nic=1[numa_node=1]")));
        }
        String admin = System.getProperty("user.name");
        List<Frame> events = new ArrayList<>();
        Session bob = as("bob", 0, events);
        assertThat(bob.onCommand(json(2, Code.JOB_START, start("9", "bob", "gpu=1")))).containsExactly(Session.error(2,
                "JOB_START is for root or the admin user " + admin + ", not 'bob'", Category.DENIED));
        assertThat(bob.onCommand(json(3, Code.JOB_END, "{\"job\":\"7\"}")).get(0).text(0)).startsWith("JOB_END is for root");
        assertThat(bob.onCommand(Frame.of(4, Code.RELOAD.value())).get(0).text(0)).startsWith("RELOAD is for root");
        JsonNode q = JSON.readTree(bob.onCommand(Frame.of(5, Code.QUERY.value())).get(0).text(0));
        assertThat(q.path("jobs")).hasSize(1);
        assertThat(q.path("jobs").get(0).path("job").asText()).isEqualTo("8");
        assertThat(q.path("maps").path("nic").path("instances").get(0).path("holder").asText()).isEqualTo("*");
        assertThat(q.path("maps").path("nic").path("instances").get(1).path("holder").asText()).isEqualTo("8");
        assertThat(bob.onCommand(json(6, Code.QUERY, "{\"job\":\"7\"}"))).containsExactly(
                Session.error(6, "job 7 is not yours, 'bob'", Category.DENIED));
        assertThat(bob.onCommand(json(7, Code.JOB_ENTER, "{\"job\":\"7\"}"))).containsExactly(
                Session.error(7, "job 7 belongs to 'alice', not 'bob'", Category.DENIED));
        assertThat(bob.onCommand(json(8, Code.JOB_ENTER, "{\"job\":\"8\"}")).get(0).text(0))
                .startsWith("the caller's pid is unknown");
        // bob's event stream shows bob's jobs only.
        bob.onCommand(Frame.of(9, Code.START_EVENTS.value()));
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_END, "{\"job\":\"7\"}"));
            c.call(json(3, Code.JOB_END, "{\"job\":\"8\"}"));
        }
        assertThat(events).hasSize(2);
        assertThat(JSON.readTree(events.get(0).text(0)).path("jobs")).hasSize(1);
        assertThat(JSON.readTree(events.get(1).text(0)).path("job").asText()).isEqualTo("8");
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void jobEnter_putsTheCallersPidUnderThePolicy_andReconciliationReleasesItWhenTheProcessIsGone() throws Exception {
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, start("7", "alice", "gpu=1")));
        }
        Process p = new ProcessBuilder("sleep", "60").start();
        Session alice = as("alice", p.pid(), new ArrayList<>());
        List<Frame> entered = alice.onCommand(json(2, Code.JOB_ENTER, "{\"job\":\"7\",\"task\":\"undefined\"}"));
        assertThat(entered.get(1)).isEqualTo(Session.ok(2));
        assertThat(entered.get(0).text(1)).isEqualTo("SGE_HGR_gpu=0");
        daemon.reconcile();
        assertThat(daemon.cluster().runningJobs()).containsExactly("7");
        p.destroyForcibly();
        p.waitFor();
        daemon.reconcile(); // no execd_spool here: the job's process decides
        assertThat(daemon.cluster().runningJobs()).isEmpty();
        assertThat(daemon.log()).contains("released job 7 (its process " + p.pid() + " has exited)");
    }

    @Test
    void aJobOfSeveralSteps_isReleasedOnlyWhenEveryEnteredProcessIsGone_alsoAfterARestart() throws Exception {
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, start("7", "alice", "gpu=1")));
        }
        Process a = new ProcessBuilder("sleep", "60").start();
        Process b = new ProcessBuilder("sleep", "60").start();
        try {
            for (Process p : List.of(a, b)) {
                List<Frame> entered = as("alice", p.pid(), new ArrayList<>()).onCommand(json(2, Code.JOB_ENTER,
                        "{\"job\":\"7\"}"));
                assertThat(entered.get(entered.size() - 1)).isEqualTo(Session.ok(2));
            }
            a.destroyForcibly();
            a.waitFor();
            daemon.reconcile();
            assertThat(daemon.cluster().runningJobs()).as("step b still runs").containsExactly("7");
            daemon.close();
            daemon = TestDaemon.start(config); // the entered processes come back from the journal
            assertThat(daemon.cluster().runningJobs()).containsExactly("7");
            b.destroyForcibly();
            b.waitFor();
            daemon.reconcile();
            assertThat(daemon.cluster().runningJobs()).isEmpty();
            assertThat(daemon.log()).anyMatch(l -> l.startsWith("released job 7 (its process"));
        } finally {
            a.destroyForcibly();
            b.destroyForcibly();
        }
    }

    private String query() throws Exception {
        try (TestClient c = client()) {
            return c.call(Frame.of(9, Code.QUERY.value())).get(0).text(0);
        }
    }
}
