// the fail-closed job path on the daemon's side, over its real socket and state directory: idempotent JOB_START and
// JOB_END, explain hides other users' jobs, strict arguments and one-line bounded ERRORs
//, the execd spool checked, one daemon per state directory, and configuration
// errors that name the file and line.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.ConfigText;
import rsmap.daemon.state.Args;
import rsmap.journal.Journal;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

@Timeout(60)
class FailClosedTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;
    /** Two cards shared two ways; devices listed, so every job's policy is closed (dry-run: not applied). */
    static final String VALUES = "gpu=4(0[devices=/dev/zero] 0[devices=/dev/zero] 1[devices=/dev/full] "
            + "1[devices=/dev/full])";
    Config config;
    Daemon daemon;

    @BeforeEach
    void start() throws Exception {
        Files.createDirectories(tmp.resolve("spool/active_jobs"));
        config = TestDaemon.config(tmp, VALUES, "reconcile_interval = 0", "execd_spool = spool");
        daemon = TestDaemon.start(config);
    }

    @AfterEach
    void stop() throws Exception {
        if (daemon != null) {
            daemon.close();
        }
    }

    private TestClient client() throws Exception {
        TestClient c = new TestClient(config.socket());
        assertThat(c.call(Frame.of(1, Code.INIT.value(), Session.VERSION))).containsExactly(Session.ok(1));
        return c;
    }

    private static Frame json(long tid, Code code, String json) {
        return Frame.of(tid, code.value(), json);
    }

    private static String start(String job, String user, String request) {
        return "{\"job\":\"" + job + "\",\"user\":\"" + user + "\",\"slots\":1,\"request\":\"" + request + "\"}";
    }

    // --- ambiguous answers ---------------------------------------------------------------------

    @Test
    void jobStart_retriedAfterALostAnswer_answersTheSameGrant_notASecond() throws Exception {
        try (TestClient c = client()) {
            List<Frame> first = c.call(json(2, Code.JOB_START, start("7", "alice", "gpu=2[same=id]")));
            List<Frame> again = c.call(json(3, Code.JOB_START, start("7", "alice", "gpu=2[same=id]")));
            assertThat(again.get(0).text(0)).isEqualTo(first.get(0).text(0));
            assertThat(again.get(0).text(1)).isEqualTo(first.get(0).text(1)).isEqualTo("SGE_HGR_gpu=0 0");
            assertThat(again.get(1)).isEqualTo(Session.ok(3));
            assertThat(daemon.cluster().runningJobs()).containsExactly("7");
            // Another request for the same job is still refused: no doubled grant, nothing changed.
            List<Frame> other = c.call(json(4, Code.JOB_START, start("7", "alice", "gpu=1")));
            assertThat(other).hasSize(1);
            assertThat(other.get(0).code()).isEqualTo(Code.ERROR.value());
            assertThat(other.get(0).text(0)).startsWith("job 7 already holds");
            // A retry by another owner is no retry either.
            assertThat(c.call(json(5, Code.JOB_START, start("7", "mallory", "gpu=2[same=id]"))).get(0).code())
                    .isEqualTo(Code.ERROR.value());
        }
        // Restarted in between (rsmapd died after the journal, before the answer): still the same grant.
        String before = query();
        daemon.close();
        daemon = TestDaemon.start(config);
        try (TestClient c = client()) {
            List<Frame> again = c.call(json(2, Code.JOB_START, start("7", "alice", "gpu=2[same=id]")));
            assertThat(again.get(0).text(1)).isEqualTo("SGE_HGR_gpu=0 0");
        }
        assertThat(query()).isEqualTo(before);
    }

    @Test
    void jobStart_afterTheJobEntered_isRefused_notAnsweredAgain() throws Exception {
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, start("7", "alice", "gpu=1")));
        }
        List<Frame> events = new ArrayList<>();
        Session s = DaemonSessions.as(daemon, "root", 0, ProcessHandle.current().pid(), events);
        s.onCommand(json(2, Code.JOB_ENTER, "{\"job\":\"7\"}"));
        try (TestClient c = client()) {
            List<Frame> again = c.call(json(3, Code.JOB_START, start("7", "alice", "gpu=1")));
            assertThat(again.get(0).code()).isEqualTo(Code.ERROR.value());
            assertThat(again.get(0).text(0)).startsWith("job 7 already holds");
        }
    }

    @Test
    void jobEnd_retried_succeeds_andAJobThatHeldNothingEndsToo() throws Exception {
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, start("7", "alice", "gpu=1")));
            assertThat(c.call(json(3, Code.JOB_END, "{\"job\":\"7\"}"))).containsExactly(Session.ok(3));
            assertThat(c.call(json(4, Code.JOB_END, "{\"job\":\"7\"}"))).containsExactly(Session.ok(4));
            assertThat(c.call(json(5, Code.JOB_END, "{\"job\":\"99\",\"task\":\"3\"}"))).containsExactly(Session.ok(5));
        }
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }

    // --- the starter enters every job ------------------------------------------------------------

    @Test
    void jobEnter_ofAJobHoldingNothing_answersNoGrant_andJobEndForgetsIt() throws Exception {
        List<Frame> events = new ArrayList<>();
        Session s = DaemonSessions.as(daemon, "bob", 1001, ProcessHandle.current().pid(), events);
        assertThat(s.onCommand(json(2, Code.JOB_ENTER, "{\"job\":\"12\"}"))).satisfies(out -> {
            assertThat(out).hasSize(2);
            assertThat(out.get(0).code()).isEqualTo(Code.STATE.value());
            assertThat(out.get(0).args()).hasSize(1); // no SGE_HGR_ line
            assertThat(out.get(0).text(0)).contains("\"job\":\"12\"", "\"grants\":{}");
        });
        assertThat(daemon.log()).anyMatch(l -> l.contains("job 12 holds nothing here")
                && l.contains("a closed policy with no granted device"));
        // Nothing was granted or journaled for it.
        assertThat(daemon.cluster().runningJobs()).isEmpty();
        // A JOB_START of that id afterwards removes what entered before it (it was not the starter).
        try (TestClient c = client()) {
            assertThat(c.call(json(3, Code.JOB_START, start("12", "bob", "gpu=1"))).get(0).code())
                    .isEqualTo(Code.STATE.value());
        }
        assertThat(daemon.log()).anyMatch(l -> l.contains("entered before its JOB_START"));
    }

    // --- explain shows other users' jobs as * ----------------------------------------------------

    @Test
    void explain_asAJobOwner_showsOtherUsersJobsAsStar_andItsOwnById() throws Exception {
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, start("41", "alice", "gpu=2[same=id]")));
            c.call(json(3, Code.JOB_START, start("42", "bob", "gpu=1")));
        }
        List<Frame> events = new ArrayList<>();
        Session bob = DaemonSessions.as(daemon, "bob", 1001, 0, events);
        List<Frame> out = bob.onCommand(json(2, Code.QUERY, "{\"explain\":\"gpu=2[same=id]\"}"));
        String text = JSON.readTree(out.get(0).text(0)).path("explain").path("text").asText();
        assertThat(text).contains("by job *").contains("by job 42").doesNotContain("41");
        // root sees every id.
        Session root = DaemonSessions.as(daemon, "root", 0, 0, events);
        String all = JSON.readTree(root.onCommand(json(2, Code.QUERY, "{\"explain\":\"gpu=2[same=id]\"}")).get(0)
                .text(0)).path("explain").path("text").asText();
        assertThat(all).contains("by job 41", "by job 42");
    }

    // --- loose arguments -------------------------------------------------------------------------

    @Test
    void arguments_ofTheWrongFormOrUnknownKeys_areErrors_andChangeNothing() throws Exception {
        String before = query();
        // Each row: the command, its argument, what the ERROR says ('s examples).
        Object[][] rows = {
            {Code.JOB_START, "{\"job\":\"7\",\"slots\":4294967297,\"request\":\"gpu=1\"}", "\"slots\" is a whole number"},
            {Code.JOB_START, "{\"job\":\"7\",\"slots\":1.5,\"request\":\"gpu=1\"}", "\"slots\" is a whole number"},
            {Code.JOB_START, "{\"job\":\"7\",\"slots\":true,\"request\":\"gpu=1\"}", "\"slots\" is a whole number"},
            {Code.JOB_START, "{\"job\":\"7\",\"slots\":1e400,\"request\":\"gpu=1\"}", "\"slots\" is a whole number"},
            {Code.JOB_START, "{\"job\":\"7\",\"slots\":\"4\",\"request\":\"gpu=1\"}", "\"slots\" is a whole number"},
            {Code.JOB_START, "{\"job\":\"7\",\"slots\":0,\"request\":\"gpu=1\"}", "\"slots\" is a whole number"},
            {Code.JOB_START, "{\"job\":\"7\",\"slot\":1,\"request\":\"gpu=1\"}", "unknown key 'slot'"},
            {Code.JOB_START, "{\"jobb\":\"7\",\"request\":\"gpu=1\"}", "unknown key 'jobb'"},
            {Code.JOB_START, "{\"job\":7,\"request\":\"gpu=1\"}", "\"job\" is a string"},
            {Code.JOB_START, "{\"job\":\"7\",\"request\":[\"gpu=1\"]}", "\"request\" is a string"},
            {Code.JOB_START, "{\"job\":\"7\",\"user\":null,\"request\":\"gpu=1\"}", "\"user\" is a string"},
            {Code.QUERY, "{\"jobb\":\"7\"}", "unknown key 'jobb'"},
            {Code.QUERY, "{\"explain\":5}", "\"explain\" is a string"},
            {Code.JOB_END, "{\"job\":\"7\",\"why\":\"x\"}", "unknown key 'why'"},
            {Code.JOB_ENTER, "{\"job\":\"7\",\"pid\":1}", "unknown key 'pid'"},
            {Code.SET_FILTERS, "{\"maps\":[\"gpu\"]}", "unknown filter 'maps'"},
        };
        try (TestClient c = client()) {
            long tid = 2;
            for (Object[] row : rows) {
                List<Frame> out = c.call(json(tid, (Code) row[0], (String) row[1]));
                assertThat(out).as("%s %s", row[0], row[1]).hasSize(1);
                assertThat(out.get(0).code()).as("%s %s", row[0], row[1]).isEqualTo(Code.ERROR.value());
                assertThat(out.get(0).text(0)).as("%s %s", row[0], row[1]).contains((String) row[2]);
                tid++;
            }
        }
        assertThat(query()).isEqualTo(before);
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void errorReasons_areOneBoundedLine_whateverTheInputEchoed() throws Exception {
        String huge = "x".repeat(1_000_000); // as much as fits in a frame of the default limit
        try (TestClient c = client()) {
            Frame nl = c.call(json(2, Code.JOB_START, "{\"job\":\"7\\n8\",\"request\":\"gpu=1\"}")).get(0);
            assertThat(nl.code()).isEqualTo(Code.ERROR.value());
            assertThat(nl.text(0)).doesNotContain("\n").contains("'7\\u000a8'");
            Frame big = c.call(json(3, Code.JOB_START, "{\"job\":\"" + huge + "\",\"request\":\"gpu=1\"}")).get(0);
            assertThat(big.code()).isEqualTo(Code.ERROR.value());
            assertThat(big.text(0).length()).isLessThanOrEqualTo(Args.MAX_REASON);
            assertThat(big.text(0)).contains("(1000000 characters)");
            Frame req = c.call(json(4, Code.JOB_START, "{\"job\":\"7\",\"request\":\"gpu=1[" + huge + "]\"}")).get(0);
            assertThat(req.code()).isEqualTo(Code.ERROR.value());
            assertThat(req.text(0).length()).isLessThanOrEqualTo(Args.MAX_REASON);
            assertThat(req.text(0)).doesNotContain("\n");
        }
    }

    // --- the execd spool -------------------------------------------------------------------------

    @Test
    void execdSpool_withoutActiveJobs_stopsTheDaemonAtStart_namingFileAndLine() throws Exception {
        daemon.close();
        daemon = null;
        Path other = tmp.resolve("other");
        Config wrong = TestDaemon.config(other, "gpu=1", "execd_spool = /nonexistent/spool");
        assertThatThrownBy(() -> TestDaemon.start(wrong)).isInstanceOf(IOException.class)
                .hasMessageContaining(other.resolve("rsmapd.conf") + ": line ")
                .hasMessageContaining("/nonexistent/spool/active_jobs is not a directory");
        // Nothing was created or locked: the right configuration starts.
        Config right = TestDaemon.config(tmp.resolve("third"), "gpu=1");
        daemon = TestDaemon.start(right);
    }

    @Test
    void reload_ofASpoolWithoutActiveJobs_isRefused_andKeepsTheGrants() throws Exception {
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, start("7", "alice", "gpu=1")));
            Path conf = tmp.resolve("rsmapd.conf");
            Files.writeString(conf, Files.readString(conf).replace("execd_spool = spool", "execd_spool = /nonexistent")
                    .replace("1[devices=/dev/full])", "2[devices=/dev/full])"));
            Frame out = c.call(Frame.of(3, Code.RELOAD.value())).get(0);
            assertThat(out.code()).isEqualTo(Code.ERROR.value());
            assertThat(out.text(0)).contains("/nonexistent/active_jobs is not a directory");
        }
        assertThat(daemon.cluster().runningJobs()).containsExactly("7");
    }

    @Test
    void reconcile_whileActiveJobsIsGone_releasesNothing_andSaysSoEachTime() throws Exception {
        Path active = tmp.resolve("spool/active_jobs");
        Files.createDirectories(active.resolve("7.1"));
        Files.createDirectories(active.resolve("8.1"));
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, start("7", "alice", "gpu=1")));
            c.call(json(3, Code.JOB_START, start("8", "bob", "gpu=1")));
        }
        Path moved = tmp.resolve("spool/moved");
        Files.move(active, moved); // an NFS hiccup, an admin's mv: says nothing about the jobs
        daemon.reconcile();
        daemon.reconcile();
        assertThat(daemon.cluster().runningJobs()).containsExactly("7", "8");
        assertThat(daemon.log().stream().filter(l -> l.startsWith("reconciliation skipped"))).hasSize(2);
        Files.move(moved, active);
        Files.delete(active.resolve("8.1")); // now a job positively ended
        daemon.reconcile();
        assertThat(daemon.cluster().runningJobs()).containsExactly("7");
    }

    // --- one daemon per state directory ----------------------------------------------------------

    @Test
    void aSecondDaemon_onTheSameStateDirectory_isRefusedNamingThePid_andTheFirstServesOn() throws Exception {
        assertThatThrownBy(() -> TestDaemon.start(config)).isInstanceOf(IOException.class)
                .hasMessageContaining("state_dir " + config.stateDir() + " is in use by another rsmapd (pid "
                        + ProcessHandle.current().pid() + ")");
        Files.createDirectories(tmp.resolve("spool/active_jobs/7.1")); // running, as execd says
        try (TestClient c = client()) {
            assertThat(c.call(json(2, Code.JOB_START, start("7", "alice", "gpu=1"))).get(0).code())
                    .isEqualTo(Code.STATE.value());
        }
        daemon.close();
        daemon = TestDaemon.start(config); // released on close
        assertThat(daemon.cluster().runningJobs()).containsExactly("7");
    }

    // --- configuration errors name the file and the line -------------------------------------------------

    @Test
    void configuration_notUtf8_aDirectory_aControlCharacterInTheHost_eachOneLineWithFileAndLine() throws Exception {
        Path conf = tmp.resolve("bad.conf");
        Files.write(conf, "complexes = complexes\nhost = node01\ncomplex_values = gpu=1(caf\u00e9)\n"
                .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        assertThatThrownBy(() -> ConfigText.read(conf)).hasMessage(conf + ": line 3: not valid UTF-8");
        assertThatThrownBy(() -> ConfigText.read(tmp)).hasMessage(tmp + ": is a directory, not a configuration file");
        assertThatThrownBy(() -> Config.parse("complexes = c\nhost = node\u000101\n", conf, "x"))
                .isInstanceOf(rsmap.ParseException.class).hasMessageContaining("line 2")
                .hasMessageContaining("host is a host name").hasMessageContaining("node\\x0101");
    }

    @Test
    void aSocketWhoseFolderCannotBeMade_stopsTheDaemonNamingTheSetting() throws Exception {
        daemon.close();
        daemon = null;
        Path other = tmp.resolve("other");
        Config c = TestDaemon.config(other, "gpu=1", "socket = /proc/rel/rsmapd.sock");
        Daemon d = new Daemon(c, ComplexTable.parse(Files.readString(c.complexes())), other.resolve("rsmapd.conf"));
        try {
            assertThatThrownBy(d::serve).isInstanceOf(IOException.class)
                    .hasMessageStartingWith(other.resolve("rsmapd.conf") + ": line " + c.lineOf("socket")
                            + ": socket: cannot serve /proc/rel/rsmapd.sock: /proc/rel: ");
        } finally {
            d.close();
        }
    }

    @Test
    void aJournalRecord_withAGoodChecksumButBadContent_stopsTheDaemonNamingTheRecord() throws Exception {
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, start("7", "alice", "gpu=1")));
        }
        daemon.close();
        daemon = null;
        Path file = config.stateDir().resolve("journal");
        try (Journal j = Journal.open(file)) {
            j.append("{\"op\":\"start\",\"job\":\"8\",\"user\":\"bob\",\"request\":\"gpu=1\",\"slots\":1,\"grant\":[1]}");
        }
        assertThatThrownBy(() -> TestDaemon.start(config)).isInstanceOf(IOException.class)
                .hasMessage(file + ": record 3: a grant record needs request, slots and grant; rsmapd will not guess "
                        + "which grants are held");
    }

    @Test
    void aJournalRecordsSlices_notASlicesPlaceWithItsUuid_stopsTheDaemonNamingTheRecord() throws Exception {
        daemon.close();
        daemon = null;
        Path file = config.stateDir().resolve("journal");
        try (Journal j = Journal.open(file)) {
            j.append("{\"op\":\"start\",\"job\":\"8\",\"user\":\"bob\",\"request\":\"gpu=1\",\"slots\":1,"
                    + "\"grant\":{\"node01\":{\"gpu\":[\"0\"]}},\"slices\":{\"0\":\"MIG-1\"}}");
        }
        assertThatThrownBy(() -> TestDaemon.start(config)).isInstanceOf(IOException.class)
                .hasMessage(file + ": record 2: slices: '0' is not a slice's place (card:profile@placement) with its MIG"
                        + " UUID (\"\": none made); rsmapd will not guess which grants are held");
    }

    // --- MODEL_DEF: INT attributes as numbers -----------------------------------------------------------

    @Test
    void modelDef_intAttributes_carryNumbers() throws Exception {
        try (TestClient c = client()) {
            for (Frame f : c.call(Frame.of(2, Code.MODEL_DEF.value()))) {
                if (f.code() != Code.ATTR_DEF.value()) {
                    continue;
                }
                JsonNode a = JSON.readTree(f.text(0));
                if (a.path("type").asText().equals("INT")) {
                    for (String k : List.of("min", "max", "default")) {
                        assertThat(a.path(k).isNull() || a.path(k).isIntegralNumber()).as("%s of %s", k, a).isTrue();
                    }
                }
            }
        }
    }

    private String query() throws Exception {
        try (TestClient c = client()) {
            return c.call(Frame.of(2, Code.QUERY.value())).get(0).text(0);
        }
    }
}
