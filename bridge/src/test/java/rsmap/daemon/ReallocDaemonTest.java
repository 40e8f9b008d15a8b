// dynamic reallocation on the daemon's side: REALLOC, RELEASE and REALLOC_CANCEL against a real daemon (its journal,
// state directory and environment files), in sessions of the peers the kernel would name.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.daemon.job.Reallocation;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Polls;
import rsmap.wire.Session;

@Timeout(60)
class ReallocDaemonTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Two cards; card 0 is /dev/zero's device, card 1 /dev/ptmx's, which a process can hold open (dry-run devices). */
    static final String VALUES = "gpu=2(0[devices=/dev/zero] 1[devices=/dev/ptmx])";
    @TempDir
    Path tmp;
    Config config;
    Daemon daemon;
    final List<Frame> aliceEvents = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        config = TestDaemon.config(tmp, VALUES, "reconcile_interval = 0");
        daemon = TestDaemon.start(config);
    }

    @AfterEach
    void stop() throws Exception {
        if (daemon != null) {
            daemon.close();
        }
    }

    private Session root() {
        return DaemonSessions.as(daemon, "root", 0, ProcessHandle.current().pid(), new ArrayList<>());
    }

    private Session alice() {
        return DaemonSessions.as(daemon, "alice", 1000, 0, aliceEvents);
    }

    private static Frame cmd(long tid, Code code, String json) {
        return Frame.of(tid, code.value(), json);
    }

    private void startJob(String job, String request) {
        List<Frame> r = root().onCommand(cmd(2, Code.JOB_START, "{\"job\":\"" + job + "\",\"user\":\"alice\","
                + "\"request\":\"" + request + "\"}"));
        assertThat(r.get(r.size() - 1)).as(r.toString()).isEqualTo(Session.ok(2));
    }

    private static JsonNode allocOf(List<Frame> frames) throws Exception {
        assertThat(frames.get(0).code()).as(frames.toString()).isEqualTo(Code.ALLOC.value());
        return JSON.readTree(frames.get(0).text(0));
    }

    private JsonNode job(String id) throws Exception {
        List<Frame> r = root().onCommand(cmd(3, Code.QUERY, "{\"job\":\"" + id + "\"}"));
        return JSON.readTree(r.get(0).text(0)).path("jobs").path(0);
    }

    @Test
    void realloc_add_grows_theGrant_theEnvironmentAndItsFile() throws Exception {
        startJob("7", "gpu=1");
        List<Frame> r = alice().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"tag\":\"t1\",\"add\":\"gpu=1\"}"));
        JsonNode a = allocOf(r);
        assertThat(a.path("type").asInt()).isEqualTo(0);
        assertThat(a.path("alloc_id").asLong()).isEqualTo(1);
        assertThat(a.path("added").toString()).isEqualTo("{\"node01\":{\"gpu\":[\"1\"]}}");
        assertThat(a.path("R_delta_add").path("execution").path("R_lite").path(0).path("children").path("gpu").asText())
                .isEqualTo("1");
        assertThat(r.get(0).text(1)).isEqualTo("0");
        assertThat(r.get(0).text(2)).isEmpty();
        assertThat(r.get(0).text(3)).isEqualTo("SGE_HGR_gpu=0 1");
        assertThat(r.get(1)).isEqualTo(Session.ok(5));
        assertThat(Files.readString(config.stateDir().resolve("env/7"))).isEqualTo("SGE_HGR_gpu=0 1\n");
        assertThat(job("7").path("env").path("SGE_HGR_gpu").asText()).isEqualTo("0 1");
        // In the journal before the answer: a restart holds the grown grant.
        daemon.close();
        daemon = TestDaemon.start(config);
        assertThat(job("7").path("grants").toString()).isEqualTo("{\"node01\":{\"gpu\":[\"0\",\"1\"]}}");
        // And alloc ids go on above every one a client may have seen (the journal makes good for a block).
        JsonNode b = allocOf(alice().onCommand(cmd(6, Code.REALLOC, "{\"job\":\"7\",\"sub\":\"gpu=1\"}")));
        assertThat(b.path("alloc_id").asLong()).isEqualTo(Reallocation.ID_BLOCK + 1);
        assertThat(b.path("tag").asText()).isEqualTo("tid-00000006");
    }

    @Test
    void realloc_sub_holdsTheInstance_untilRelease_thenItIsFree() throws Exception {
        startJob("7", "gpu=2");
        JsonNode a = allocOf(alice().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"tag\":\"s\",\"ids\":"
                + "{\"node01\":{\"gpu\":[\"1\"]}}}")));
        assertThat(a.path("removed").toString()).isEqualTo("{\"node01\":{\"gpu\":[\"1\"]}}");
        assertThat(a.path("env").path("SGE_HGR_gpu").asText()).isEqualTo("0");
        assertThat(job("7").path("releasing").toString()).isEqualTo("{\"node01\":{\"gpu\":[\"1\"]}}");
        List<Frame> q = root().onCommand(cmd(3, Code.QUERY, "{\"job\":\"7\"}"));
        assertThat(JSON.readTree(q.get(0).text(0)).path("maps").path("gpu").path("instances").toString())
                .as("held by the job until it releases it").isEqualTo("[{\"id\":\"0\",\"holder\":\"7\",\"devices\":"
                        + "\"/dev/zero\",\"health\":\"ok\"},{\"id\":\"1\",\"holder\":\"7\",\"devices\":\"/dev/ptmx\",\"health\":\"ok\"}]");
        // Taken away but not released: nobody else gets it.
        List<Frame> other = root().onCommand(cmd(6, Code.JOB_START, "{\"job\":\"8\",\"request\":\"gpu=1\"}"));
        assertThat(other.get(0).code()).isEqualTo(Code.ERROR.value());
        // A release of what was not taken away is refused and changes nothing.
        List<Frame> wrong = alice().onCommand(cmd(7, Code.RELEASE, "{\"job\":\"7\",\"ids\":{\"node01\":{\"gpu\":[\"0\"]}}}"));
        assertThat(wrong.get(0).code()).isEqualTo(Code.ERROR.value());
        assertThat(wrong.get(0).text(0)).contains("node01/gpu 0 was not taken away from job 7");
        assertThat(job("7").path("releasing").toString()).isEqualTo("{\"node01\":{\"gpu\":[\"1\"]}}");
        List<Frame> rel = alice().onCommand(cmd(8, Code.RELEASE, "{\"job\":\"7\"}"));
        assertThat(rel.get(0).code()).as(rel.toString()).isEqualTo(Code.STATE.value());
        assertThat(rel.get(0).text(1)).isEqualTo("SGE_HGR_gpu=0");
        assertThat(job("7").has("releasing")).isFalse();
        assertThat(root().onCommand(cmd(9, Code.JOB_START, "{\"job\":\"8\",\"request\":\"gpu=1\"}")).get(0).text(1))
                .isEqualTo("SGE_HGR_gpu=1");
        // Nothing is left to release.
        assertThat(alice().onCommand(cmd(10, Code.RELEASE, "{\"job\":\"7\"}")).get(0).text(0))
                .contains("nothing to release");
    }

    @Test
    void waitingRealloc_keepsItsCommandOpen_andIsAnsweredWhenAJobEnds() throws Exception {
        startJob("7", "gpu=1");
        startJob("8", "gpu=1");
        Session waiting = alice();
        assertThat(waiting.onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"tag\":\"w\",\"add\":\"gpu=1\"}"))).isEmpty();
        assertThat(aliceEvents).isEmpty();
        root().onCommand(cmd(6, Code.JOB_END, "{\"job\":\"8\"}"));
        assertThat(aliceEvents).hasSize(2);
        JsonNode a = JSON.readTree(aliceEvents.get(0).text(0));
        assertThat(aliceEvents.get(0).tid()).isEqualTo(5);
        assertThat(a.path("type").asInt()).isEqualTo(0);
        assertThat(a.path("added").toString()).isEqualTo("{\"node01\":{\"gpu\":[\"1\"]}}");
        assertThat(aliceEvents.get(1)).isEqualTo(Session.ok(5));
        assertThat(job("7").path("env").path("SGE_HGR_gpu").asText()).isEqualTo("0 1");
    }

    @Test
    void reallocCancel_answersTheWaitingRealloc_andItsOwnCommand() throws Exception {
        startJob("7", "gpu=1");
        startJob("8", "gpu=1");
        Session waiting = alice();
        waiting.onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"tag\":\"w\",\"add\":\"gpu=1\"}"));
        List<Frame> c = alice().onCommand(cmd(9, Code.REALLOC_CANCEL, "{\"job\":\"7\",\"tag\":\"w\"}"));
        assertThat(allocOf(c).path("type").asInt()).isEqualTo(2);
        assertThat(c.get(1)).isEqualTo(Session.ok(9));
        assertThat(aliceEvents.get(0).tid()).isEqualTo(5);
        assertThat(aliceEvents.get(0).text(1)).isEqualTo("2");
        assertThat(aliceEvents.get(1)).isEqualTo(Session.ok(5));
        // Nothing waits any more: the card job 8 frees stays free.
        root().onCommand(cmd(6, Code.JOB_END, "{\"job\":\"8\"}"));
        assertThat(job("7").path("env").path("SGE_HGR_gpu").asText()).isEqualTo("0");
        List<Frame> again = alice().onCommand(cmd(10, Code.REALLOC_CANCEL, "{\"job\":\"7\",\"tag\":\"w\"}"));
        assertThat(again.get(0).text(0)).isEqualTo("job 7 has no waiting realloc tagged w");
    }

    @Test
    void closingTheConnection_cancelsItsWaitingRealloc() throws Exception {
        startJob("7", "gpu=1");
        startJob("8", "gpu=1");
        Session waiting = DaemonSessions.as(daemon, "alice", 1000, 0, aliceEvents);
        waiting.onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"tag\":\"w\",\"add\":\"gpu=1\"}"));
        waiting.end();
        root().onCommand(cmd(6, Code.JOB_END, "{\"job\":\"8\"}"));
        assertThat(aliceEvents).isEmpty();
        assertThat(job("7").path("env").path("SGE_HGR_gpu").asText()).isEqualTo("0");
    }

    @Test
    void jobEnd_cancelsItsWaitingReallocs_andFreesWhatItIsToGiveBack() throws Exception {
        startJob("7", "gpu=1");
        startJob("8", "gpu=1");
        alice().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"tag\":\"w\",\"add\":\"gpu=1\"}"));
        allocOf(alice().onCommand(cmd(6, Code.REALLOC, "{\"job\":\"8\",\"tag\":\"s\",\"sub\":\"gpu=1\"}")));
        root().onCommand(cmd(7, Code.JOB_END, "{\"job\":\"7\"}"));
        assertThat(aliceEvents.get(0).text(1)).isEqualTo("2");
        assertThat(JSON.readTree(aliceEvents.get(0).text(0)).path("error").asText()).isEqualTo("job 7 ended");
        root().onCommand(cmd(8, Code.JOB_END, "{\"job\":\"8\"}"));
        assertThat(daemon.cluster().runningJobs()).isEmpty();
        startJob("9", "gpu=2");
    }

    @Test
    void anotherUsersRealloc_isRefused_andAnUnknownJobIsDenied() throws Exception {
        startJob("7", "gpu=1");
        Session bob = DaemonSessions.as(daemon, "bob", 1001, 0, new ArrayList<>());
        for (Code code : List.of(Code.REALLOC, Code.RELEASE, Code.REALLOC_CANCEL)) {
            List<Frame> r = bob.onCommand(cmd(5, code, "{\"job\":\"7\"" + (code == Code.REALLOC
                    ? ",\"add\":\"gpu=1\"" : code == Code.REALLOC_CANCEL ? ",\"tag\":\"t\"" : "") + "}"));
            assertThat(r.get(0).code()).isEqualTo(Code.ERROR.value());
            assertThat(r.get(0).text(0)).isEqualTo(code + " of job 7 is for its owner 'alice', root or the admin user, "
                    + "not 'bob'");
        }
        assertThat(job("7").path("env").path("SGE_HGR_gpu").asText()).isEqualTo("0");
        JsonNode a = allocOf(bob.onCommand(cmd(6, Code.REALLOC, "{\"job\":\"99\",\"add\":\"gpu=1\"}")));
        assertThat(a.path("type").asInt()).isEqualTo(1);
        assertThat(a.path("error").asText()).isEqualTo("unknown job 99");
    }

    @Test
    void badRequests_areDenied_badArguments_areErrors() throws Exception {
        startJob("7", "gpu=1");
        JsonNode deny = allocOf(alice().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"add\":\"gpu=9\"}")));
        assertThat(deny.path("type").asInt()).isEqualTo(1);
        assertThat(allocOf(alice().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"add\":\"gpu=(\"}")))
                .path("type").asInt()).isEqualTo(1);
        JsonNode spec = allocOf(alice().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"spec_add\":{\"version\":1}}")));
        assertThat(spec.path("type").asInt()).isEqualTo(1);
        assertThat(spec.path("error").asText()).isEqualTo("spec_add: $.resources: required, but missing");
        for (String bad : List.of("{\"job\":\"7\"}", "{\"job\":\"7\",\"add\":1}", "{\"job\":\"7\",\"add\":\"gpu=1\",\"x\":1}",
                "{\"job\":\"7\",\"tag\":\"a b\",\"add\":\"gpu=1\"}", "{\"job\":\"7\",\"ids\":{\"node01\":[\"1\"]}}",
                "{\"job\":\"7\",\"add\":\"gpu=1\",\"spec_add\":{}}")) {
            List<Frame> r = alice().onCommand(cmd(6, Code.REALLOC, bad));
            assertThat(r).as(bad).hasSize(1);
            assertThat(r.get(0).code()).as(bad).isEqualTo(Code.ERROR.value());
        }
        assertThat(job("7").path("env").path("SGE_HGR_gpu").asText()).isEqualTo("0");
    }

    @Test
    void reallocOff_answersUnsupported_andReloadTurnsItOn() throws Exception {
        daemon.close();
        config = TestDaemon.config(tmp.resolve("off"), VALUES, "reconcile_interval = 0", "realloc = off");
        daemon = TestDaemon.start(config);
        startJob("7", "gpu=1");
        JsonNode a = allocOf(alice().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"add\":\"gpu=1\"}")));
        assertThat(a.path("type").asInt()).isEqualTo(3);
        assertThat(a.path("error").asText()).isEqualTo("reallocation is off");
        Path conf = config.complexes().resolveSibling("rsmapd.conf");
        Files.writeString(conf, Files.readString(conf).replace("realloc = off", "realloc = on"));
        assertThat(root().onCommand(Frame.of(6, Code.RELOAD.value()))).endsWith(Session.ok(6));
        assertThat(allocOf(alice().onCommand(cmd(7, Code.REALLOC, "{\"job\":\"7\",\"add\":\"gpu=1\"}")))
                .path("type").asInt()).isEqualTo(0);
    }

    /** docs/protocol.md, RELOAD: {@code changed} reports a change of the realloc settings too (no new generation). */
    @Test
    void reload_onlyReallocSettingsChanged_answersChangedTrue() throws Exception {
        Path conf = config.complexes().resolveSibling("rsmapd.conf");
        String[][] steps = {{"", "realloc = off"}, {"", ""}, {"realloc = off", "realloc = on"},
                {"realloc = on", "realloc = on\nrealloc_policy = smallest"}, {"", ""}};
        boolean[] expected = {true, false, true, true, false};
        long generation = -1;
        for (int i = 0; i < steps.length; i++) {
            String text = Files.readString(conf);
            text = steps[i][0].isEmpty() ? text + steps[i][1] + (steps[i][1].isEmpty() ? "" : "\n")
                    : text.replace(steps[i][0], steps[i][1]);
            Files.writeString(conf, text);
            List<Frame> r = root().onCommand(Frame.of(6 + i, Code.RELOAD.value()));
            assertThat(r).as("step %d", i).endsWith(Session.ok(6 + i));
            JsonNode state = JSON.readTree(r.get(0).text(0));
            assertThat(state.path("changed").asBoolean()).as("step %d: %s", i, text).isEqualTo(expected[i]);
            if (generation >= 0) {
                assertThat(state.path("generation").asLong()).as("no new generation").isEqualTo(generation);
            }
            generation = state.path("generation").asLong();
        }
    }

    @Test
    void restartBetweenSuccessAndRelease_stillCompletesTheShrink() throws Exception {
        startJob("7", "gpu=2");
        allocOf(alice().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"sub\":\"gpu=1\"}")));
        String releasing = job("7").path("releasing").toString();
        daemon.close(); // as good as SIGKILL for the journal: every record is forced before its answer
        daemon = TestDaemon.start(config);
        assertThat(job("7").path("releasing").toString()).isEqualTo(releasing);
        assertThat(root().onCommand(cmd(6, Code.JOB_START, "{\"job\":\"8\",\"request\":\"gpu=1\"}")).get(0).code())
                .isEqualTo(Code.ERROR.value());
        assertThat(alice().onCommand(cmd(7, Code.RELEASE, "{\"job\":\"7\"}")).get(0).code()).isEqualTo(Code.STATE.value());
        daemon.close();
        daemon = TestDaemon.start(config);
        assertThat(job("7").has("releasing")).isFalse();
        startJob("8", "gpu=1");
    }

    @Test
    void release_isRefused_whileAProcessOfTheJobHoldsTheDeviceOpen() throws Exception {
        startJob("7", "gpu=2");
        Process holder = new ProcessBuilder("sh", "-c", "exec 3<>/dev/ptmx; sleep 30").start();
        try {
            List<Frame> entered = DaemonSessions.as(daemon, "root", 0, holder.pid(), new ArrayList<>())
                    .onCommand(cmd(4, Code.JOB_ENTER, "{\"job\":\"7\"}"));
            assertThat(entered.get(entered.size() - 1)).as(entered.toString()).isEqualTo(Session.ok(4));
            Polls.until("the shell has opened its descriptor", () -> Files.isSymbolicLink(Path.of("/proc", Long.toString(holder.pid()),
                    "fd", "3")) && Files.readSymbolicLink(Path.of("/proc", Long.toString(holder.pid()), "fd", "3")).toString()
                    .equals("/dev/ptmx"));
            allocOf(alice().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"ids\":{\"node01\":{\"gpu\":[\"1\"]}}}")));
            List<Frame> r = alice().onCommand(cmd(6, Code.RELEASE, "{\"job\":\"7\"}"));
            assertThat(r.get(0).code()).isEqualTo(Code.ERROR.value());
            assertThat(r.get(0).text(0)).contains("process " + holder.pid() + " still holds /dev/ptmx");
            holder.destroy();
            holder.waitFor(10, TimeUnit.SECONDS);
            assertThat(alice().onCommand(cmd(7, Code.RELEASE, "{\"job\":\"7\"}")).get(0).code())
                    .isEqualTo(Code.STATE.value());
        } finally {
            holder.destroyForcibly();
        }
    }

    @Test
    void rForm_takesAway_andTheAnswersRDeltaSub_isWhatRelease_givesBack() throws Exception {
        startJob("7", "gpu=2");
        String r1 = "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\",\"children\":{\"core\":\"\",\"gpu\":\"1\"}}],"
                + "\"nodelist\":[\"node01\"],\"starttime\":0,\"expiration\":0}}";
        JsonNode a = allocOf(alice().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"R\":" + r1 + "}")));
        assertThat(a.path("type").asInt()).as(a.toString()).isEqualTo(0);
        assertThat(a.path("removed").toString()).isEqualTo("{\"node01\":{\"gpu\":[\"1\"]}}");
        List<Frame> rel = alice().onCommand(cmd(6, Code.RELEASE, "{\"job\":\"7\",\"R\":" + a.path("R_delta_sub") + "}"));
        assertThat(rel.get(0).code()).as(rel.toString()).isEqualTo(Code.STATE.value());
        assertThat(job("7").has("releasing")).isFalse();
        // An R naming no instance of this host: DENY for a realloc, ERROR for a release.
        String bad = r1.replace("\"1\"}", "\"7\"}");
        JsonNode d = allocOf(alice().onCommand(cmd(7, Code.REALLOC, "{\"job\":\"7\",\"R\":" + bad + "}")));
        assertThat(d.path("type").asInt()).isEqualTo(1);
        assertThat(d.path("error").asText()).startsWith("R: $.execution.R_lite[0].children.gpu: ");
        assertThat(alice().onCommand(cmd(8, Code.RELEASE, "{\"job\":\"7\",\"R\":" + bad + "}")).get(0).text(0))
                .startsWith("RELEASE: R: $.execution.R_lite[0].children.gpu: ");
    }

    @Test
    void specAdd_theRfc51JobspecForm_grows() throws Exception {
        startJob("7", "gpu=1");
        String spec = "{\"version\":1,\"resources\":[{\"type\":\"slot\",\"count\":1,\"label\":\"task\","
                + "\"with\":[{\"type\":\"core\",\"count\":1},{\"type\":\"gpu\",\"count\":1}]}],"
                + "\"tasks\":[{\"command\":[\"app\"],\"slot\":\"task\",\"count\":{\"per_slot\":1}}],"
                + "\"attributes\":{\"system\":{\"duration\":0}}}";
        JsonNode a = allocOf(alice().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"spec_add\":" + spec + "}")));
        assertThat(a.path("type").asInt()).as(a.toString()).isEqualTo(0);
        assertThat(a.path("R_delta_add").path("execution").path("nodelist").toString()).isEqualTo("[\"node01\"]");
        assertThat(a.path("env").path("SGE_HGR_gpu").asText()).isEqualTo("0 1");
    }

    @Test
    void allocIds_ofDeniedAnswersToo_areNeverHandedOutAgain_afterARestart() throws Exception {
        startJob("7", "gpu=1");
        long denied = allocOf(alice().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"7\",\"add\":\"gpu=9\"}")))
                .path("alloc_id").asLong();
        for (int restart = 0; restart < 2; restart++) { // the second start reads the compacted journal
            daemon.close();
            daemon = TestDaemon.start(config);
            long next = allocOf(alice().onCommand(cmd(6, Code.REALLOC, "{\"job\":\"7\",\"add\":\"gpu=9\"}")))
                    .path("alloc_id").asLong();
            assertThat(next).isGreaterThan(denied);
            denied = next;
        }
    }
}
