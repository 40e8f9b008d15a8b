// docs/health.md against a real daemon: DRAIN and UNDRAIN (root and the admin only, every share, journaled,
// kept across a restart with the check's taints), a start refused naming the taint, the owner's event
// stream told with the holding jobs, and health_command tainting, clearing and being killed at its timeout.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.authority.AuthorityTest;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.HealthSettings;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Polls;
import rsmap.wire.Session;

@Timeout(60)
class HealthDaemonTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;

    private static List<Frame> call(Daemon d, String user, long uid, Code code, String json) {
        Session s = DaemonSessions.as(d, user, uid, 0, new ArrayList<>());
        return s.onCommand(json == null ? Frame.of(2, code.value()) : Frame.of(2, code.value(), json));
    }

    private static List<Frame> root(Daemon d, Code code, String json) {
        return call(d, "root", 0, code, json);
    }

    /** Each instance of gpu as "id health" (health: ok, or source: reason). */
    private static List<String> gpus(Daemon d) throws Exception {
        JsonNode q = JSON.readTree(root(d, Code.QUERY, null).get(0).text(0));
        List<String> out = new ArrayList<>();
        for (JsonNode i : q.path("maps").path("gpu").path("instances")) {
            JsonNode h = i.path("health");
            out.add(i.path("id").asText() + " " + (h.isObject() ? h.path("source").asText() + ": "
                    + h.path("reason").asText() : h.asText()));
        }
        return out;
    }

    private static String error(List<Frame> answer) {
        assertThat(answer.get(0).code()).as(answer.toString()).isEqualTo(Code.ERROR.value());
        return answer.get(0).text(0);
    }

    @Test
    void drain_taintsEveryShare_refusesNewStartsNamingWhy_andOnlyRootOrTheAdminMay() throws Exception {
        Config c = TestDaemon.config(tmp.resolve("d"), "gpu=4(0 0 1 1)", "reconcile_interval = 0");
        try (Daemon d = TestDaemon.start(c)) {
            assertThat(root(d, Code.JOB_START, "{\"job\":\"7\",\"user\":\"alice\",\"request\":\"gpu=1\"}").get(0).text(0))
                    .contains("\"SGE_HGR_gpu\":\"0\"");
            List<Frame> aliceEvents = new ArrayList<>();
            List<Frame> bobEvents = new ArrayList<>();
            DaemonSessions.as(d, "alice", 1000, 0, aliceEvents).onCommand(Frame.of(3, Code.START_EVENTS.value()));
            DaemonSessions.as(d, "bob", 1001, 0, bobEvents).onCommand(Frame.of(3, Code.START_EVENTS.value()));
            int aliceBefore = aliceEvents.size();
            int bobBefore = bobEvents.size();

            assertThat(error(call(d, "alice", 1000, Code.DRAIN, "{\"map\":\"gpu\",\"id\":\"0\"}")))
                    .contains("DRAIN is for root or the admin user");
            assertThat(error(root(d, Code.DRAIN, "{\"map\":\"gpu\",\"id\":\"9\"}"))).isEqualTo("gpu has no instance 9");
            assertThat(error(root(d, Code.DRAIN, "{\"map\":\"nic\",\"id\":\"0\"}"))).startsWith("no resource map nic here");
            assertThat(error(root(d, Code.DRAIN, "{\"map\":\"gpu\",\"id\":\"0\",\"reason\":\"a\\nb\"}")))
                    .contains("one printable line");
            assertThat(error(root(d, Code.DRAIN, "{\"map\":\"gpu\",\"id\":\"0\",\"why\":\"x\"}"))).contains("why");
            assertThat(gpus(d)).as("a refusal changes nothing").containsExactly("0 ok", "0 ok", "1 ok", "1 ok");

            JsonNode drained = JSON.readTree(root(d, Code.DRAIN, "{\"map\":\"gpu\",\"id\":\"0\",\"reason\":\"fan\"}")
                    .get(0).text(0));
            assertThat(drained.path("changed").asBoolean()).isTrue();
            assertThat(gpus(d)).containsExactly("0 admin: fan", "0 admin: fan", "1 ok", "1 ok");
            assertThat(JSON.readTree(root(d, Code.DRAIN, "{\"map\":\"gpu\",\"id\":\"0\",\"reason\":\"fan\"}").get(0)
                    .text(0)).path("changed").asBoolean()).as("the same drain again").isFalse();
            // the job holding a share keeps it; its owner is told, with the job; another user is not
            assertThat(d.jobs()).containsKey("7");
            List<JsonNode> told = new ArrayList<>();
            for (Frame f : aliceEvents.subList(aliceBefore, aliceEvents.size())) {
                told.add(JSON.readTree(f.text(0)));
            }
            assertThat(told).anyMatch(e -> e.path("event").asText().equals("taint") && e.path("id").asText().equals("0")
                    && e.path("source").asText().equals("admin") && e.path("jobs").toString().equals("[\"7\"]"));
            assertThat(bobEvents.subList(bobBefore, bobEvents.size())).noneMatch(f -> f.text(0).contains("taint"));

            // the free share of card 0 is not granted: card 1's are, then a start is refused naming the taint
            root(d, Code.JOB_START, "{\"job\":\"8\",\"user\":\"bob\",\"request\":\"gpu=2\"}");
            assertThat(error(root(d, Code.JOB_START, "{\"job\":\"9\",\"user\":\"bob\",\"request\":\"gpu=1\"}")))
                    .contains("tainted: 0 (admin: fan at ");
            assertThat(error(root(d, Code.JOB_START, "{\"job\":\"9\",\"user\":\"bob\",\"request\":\"gpu=1[id=0]\"}")))
                    .contains("tainted: 0 (admin: fan at ");

            String explained = root(d, Code.QUERY, "{\"explain\":\"gpu=1\"}").get(0).text(0);
            assertThat(explained).as("explain names the tainted instance and why").contains("tainted   admin: fan at ")
                    .contains("tainted: 0 (admin: fan at ");
            assertThat(error(call(d, "alice", 1000, Code.UNDRAIN, "{\"map\":\"gpu\",\"id\":\"0\"}")))
                    .contains("UNDRAIN is for root or the admin user");
            root(d, Code.UNDRAIN, "{\"map\":\"gpu\",\"id\":\"0\"}");
            assertThat(gpus(d)).containsExactly("0 ok", "0 ok", "1 ok", "1 ok");
            assertThat(root(d, Code.JOB_START, "{\"job\":\"9\",\"user\":\"bob\",\"request\":\"gpu=1\"}").get(0).text(0))
                    .contains("\"SGE_HGR_gpu\":\"0\"");
            assertThat(aliceEvents.subList(aliceBefore, aliceEvents.size())).anyMatch(f -> f.text(0).contains("\"untaint\""));
        }
    }

    @Test
    void aWaitingRealloc_isAnsweredWhenTheCardItWaitsFor_isUndrained() throws Exception {
        Config c = TestDaemon.config(tmp.resolve("d"), "gpu=2(0 1)", "reconcile_interval = 0");
        try (Daemon d = TestDaemon.start(c)) {
            root(d, Code.JOB_START, "{\"job\":\"7\",\"user\":\"alice\",\"request\":\"gpu=1\"}");
            root(d, Code.DRAIN, "{\"map\":\"gpu\",\"id\":\"1\"}");
            List<Frame> alice = new ArrayList<>();
            Session waiting = DaemonSessions.as(d, "alice", 1000, 0, alice);
            assertThat(waiting.onCommand(Frame.of(5, Code.REALLOC.value(), "{\"job\":\"7\",\"tag\":\"w\",\"add\":"
                    + "\"gpu=1\"}"))).as("the only other card is drained: it waits").isEmpty();
            root(d, Code.UNDRAIN, "{\"map\":\"gpu\",\"id\":\"1\"}");
            assertThat(alice).hasSize(2);
            assertThat(JSON.readTree(alice.get(0).text(0)).path("added").toString())
                    .isEqualTo("{\"node01\":{\"gpu\":[\"1\"]}}");
            assertThat(alice.get(1)).isEqualTo(Session.ok(5));
            JsonNode job = JSON.readTree(root(d, Code.QUERY, "{\"job\":\"7\"}").get(0).text(0)).path("jobs").get(0);
            assertThat(job.path("env").path("SGE_HGR_gpu").asText()).isEqualTo("0 1");
        }
    }

    @Test
    void drainOnAnAuthority_taintsAGlobalInstance_andAHostsGlobalPartIsRefusedNamingIt() throws Exception {
        int port = rsmap.wire.Ports.free();
        Config a = AuthorityTest.authorityConfig(tmp.resolve("authority"), port, "lic=2(la lb)");
        try (Daemon authority = TestDaemon.start(a, AuthorityTest.TOKENS);
             Daemon host = TestDaemon.start(TestDaemon.config(tmp.resolve("node01"), "gpu=2(0 1)", "host = node01",
                     "authority = 127.0.0.1:" + port, "reconcile_interval = 0"), AuthorityTest.TOKENS)) {
            root(authority, Code.DRAIN, "{\"map\":\"lic\",\"id\":\"la\",\"reason\":\"licence server down\"}");
            JsonNode q = JSON.readTree(root(authority, Code.QUERY, null).get(0).text(0));
            assertThat(q.path("maps").path("lic").path("instances").get(0).path("health").path("reason").asText())
                    .isEqualTo("licence server down");
            // the host connects first
            List<Frame> first = Polls.retry(Duration.ofSeconds(5), () -> root(host, Code.JOB_START,
                    "{\"job\":\"7\",\"user\":\"alice\",\"request\":\"lic=1\"}"), r -> r.get(0).code() != Code.ERROR.value());
            assertThat(first.get(0).text(0)).as(first.toString()).contains("\"SGE_HGR_lic\":\"lb\"");
            assertThat(error(root(host, Code.JOB_START, "{\"job\":\"8\",\"user\":\"alice\",\"request\":\"lic=1\"}")))
                    .contains("tainted: la (admin: licence server down at ");
        }
    }

    @Test
    void adminAndCheckTaints_surviveARestart() throws Exception {
        Path check = tmp.resolve("check");
        Files.writeString(check, "#!/bin/sh\ncat " + tmp.resolve("verdicts") + "\n");
        Files.setPosixFilePermissions(check, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(tmp.resolve("verdicts"), "gpu 1 taint fan failed\n");
        Config c = TestDaemon.config(tmp.resolve("d"), "gpu=4(0 0 1 1)", "reconcile_interval = 0",
                "health_command = " + check, "health_interval = 3600");
        try (Daemon d = TestDaemon.start(c)) {
            root(d, Code.DRAIN, "{\"map\":\"gpu\",\"id\":\"0\",\"reason\":\"replace the fan\"}");
            Polls.await(Duration.ofSeconds(4), () -> gpus(d).contains("1 check: fan failed"));
            assertThat(gpus(d)).containsExactly("0 admin: replace the fan", "0 admin: replace the fan",
                    "1 check: fan failed", "1 check: fan failed");
        }
        Files.writeString(tmp.resolve("verdicts"), ""); // the check says nothing at the next start
        try (Daemon d = TestDaemon.start(c)) {
            assertThat(gpus(d)).containsExactly("0 admin: replace the fan", "0 admin: replace the fan",
                    "1 check: fan failed", "1 check: fan failed");
            assertThat(error(root(d, Code.JOB_START, "{\"job\":\"9\",\"user\":\"bob\",\"request\":\"gpu=1\"}")))
                    .contains("tainted: 0 (admin: replace the fan at ").contains("1 (check: fan failed at ");
            root(d, Code.UNDRAIN, "{\"map\":\"gpu\",\"id\":\"0\"}");
        }
        try (Daemon d = TestDaemon.start(c)) {
            assertThat(gpus(d)).containsExactly("0 ok", "0 ok", "1 check: fan failed", "1 check: fan failed");
            JsonNode alt = JSON.readTree(root(d, Code.JOB_START, "{\"job\":\"10\",\"user\":\"bob\","
                    + "\"alternatives\":[\"gpu=1[id=1]\",\"gpu=1[id=0]\"]}").get(0).text(0));
            assertThat(alt.path("alternative").asInt()).as("the first alternative wants the tainted card").isEqualTo(1);
            assertThat(alt.path("env").path("SGE_HGR_gpu").asText()).isEqualTo("0");
        }
    }

    @Test
    void healthCommand_taintsAndClears_andOneThatHangsIsKilledChangingNothing() throws Exception {
        Path check = tmp.resolve("check");
        Path verdicts = tmp.resolve("verdicts");
        Path started = tmp.resolve("started");
        Files.writeString(check, "#!/bin/sh\necho run >> " + started + "\nif [ -e " + tmp.resolve("hang") + " ]; then "
                + "echo 'gpu 0 taint would be wrong'; exec sleep 600; fi\ncat " + verdicts + "\n");
        Files.setPosixFilePermissions(check, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(verdicts, "gpu 0 taint ECC page retirement pending\n# a comment\ngpu 1 ok\nnonsense\n");
        Config c = TestDaemon.config(tmp.resolve("d"), "gpu=4(0 0 1 1)", "reconcile_interval = 0",
                "health_command = " + check, "health_interval = 1", "health_timeout = 1");
        try (Daemon d = TestDaemon.start(c)) {
            Polls.await(Duration.ofSeconds(4), () -> gpus(d).contains("0 check: ECC page retirement pending"));
            assertThat(gpus(d)).containsExactly("0 check: ECC page retirement pending",
                    "0 check: ECC page retirement pending", "1 ok", "1 ok");
            assertThat(d.log()).anyMatch(l -> l.contains("health_command: line 4: expected 'MAP ID ok'"));

            Files.writeString(verdicts, "gpu 0 ok\ngpu 1 taint too hot\n");
            Polls.await(Duration.ofSeconds(6), () -> gpus(d).contains("1 check: too hot"));
            assertThat(gpus(d)).containsExactly("0 ok", "0 ok", "1 check: too hot", "1 check: too hot");

            Files.writeString(tmp.resolve("hang"), "");
            Polls.await(Duration.ofSeconds(6), () -> d.log().stream().anyMatch(l -> l.contains("did not finish within health_timeout")));
            assertThat(d.log()).anyMatch(l -> l.contains("did not finish within health_timeout (1 s): killed; nothing changed"));
            assertThat(gpus(d)).as("a check killed at its timeout changes nothing")
                    .containsExactly("0 ok", "0 ok", "1 check: too hot", "1 check: too hot");
            assertThat(ProcessHandle.allProcesses().filter(p -> p.info().commandLine().orElse("").equals("sleep 600")))
                    .as("the check was killed").isEmpty();
        }
    }

    @Test
    void healthSettings_areReadAndCheckedInRsmapdConf() throws Exception {
        Config c = TestDaemon.config(tmp.resolve("d"), "NONE", "health_interval = 5", "health_timeout = 2",
                "gpu_ignore_xids = 13, 43");
        assertThat(c.health().interval()).isEqualTo(5);
        assertThat(c.health().timeout()).isEqualTo(2);
        assertThat(c.health().ignoredXids()).containsExactlyInAnyOrder(13L, 43L);
        assertThat(TestDaemon.config(tmp.resolve("e"), "NONE").health()).isEqualTo(HealthSettings.defaults());
        for (String[] bad : new String[][] {{"health_interval = 0", "health_interval is a whole number of seconds from 1"},
            {"health_timeout = x", "health_timeout is a whole number of seconds"},
            {"gpu_ignore_xids = 13,x", "gpu_ignore_xids is a comma list of Xid numbers"},
            {"health_command = relative/check", "health_command is an absolute path"}}) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> TestDaemon.config(tmp.resolve("f" + bad[0].length()),
                    "NONE", bad[0])).as(bad[0]).hasMessageContaining(bad[1]);
        }
    }
}
