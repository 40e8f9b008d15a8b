// docs/cluster.md, "One group for the whole job", for a global map, in one JVM: the authority holds every
// host's global part of one job (HOST:JOB) to the group the first part chose, refuses a part that group
// cannot serve leaving nothing behind, keeps the key over restarts and reconciliations, forgets it with the
// job's last part, and keeps one key per map where the job also holds a host map's group.
package rsmap.daemon.authority;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.Daemon;
import rsmap.daemon.DaemonSessions;
import rsmap.daemon.TestDaemon;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Ports;
import rsmap.wire.Session;

@Timeout(60)
class GlobalKeysTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * Four licences of server la, three of lb: alone, lic=1[same=id] and lic=3[same=id] take lb (the smaller
     * group that is large enough); once la has one free and lb two, lic=1[same=id] alone takes la.
     */
    static final String LICENCES = "lic=7(la la la la lb lb lb)";
    @TempDir
    Path tmp;
    Config config;
    Daemon authority;

    @BeforeEach
    void start() throws Exception {
        config = AuthorityTest.authorityConfig(tmp.resolve("authority"), Ports.free(), LICENCES);
        authority = TestDaemon.start(config, AuthorityTest.TOKENS);
    }

    @AfterEach
    void stop() throws Exception {
        if (authority != null) {
            authority.close();
        }
    }

    private List<Frame> call(Code code, String json) {
        Session s = DaemonSessions.as(authority, "root", 0, 0, new ArrayList<>());
        return s.onCommand(Frame.of(2, code.value(), json));
    }

    /** {@code host}'s global part of {@code job}: the authority's answer. */
    private List<Frame> start(String host, String job, String request) {
        return call(Code.JOB_START, "{\"host\":\"" + host + "\",\"job\":\"" + job + "\",\"user\":\"alice\",\"request\":\""
                + request + "\"}");
    }

    /** The licences granted to {@code host}'s part of {@code job}. */
    private String granted(String host, String job, String request) {
        List<Frame> a = start(host, job, request);
        assertThat(a.get(a.size() - 1)).as(host + ":" + job + " " + a).isEqualTo(Session.ok(2));
        return a.get(0).text(1);
    }

    private void end(String host, String job) {
        assertThat(call(Code.JOB_END, "{\"host\":\"" + host + "\",\"job\":\"" + job + "\"}")).containsExactly(Session.ok(2));
    }

    private JsonNode jobKeys() throws Exception {
        return JSON.readTree(call(Code.QUERY, "{\"cluster\":true}").get(0).text(0)).path("job_keys");
    }

    /** The jobs the authority holds grants of, HOST:JOB. */
    private List<String> held() throws Exception {
        List<String> out = new ArrayList<>();
        JSON.readTree(call(Code.QUERY, "{}").get(0).text(0)).path("jobs").forEach(j -> out.add(j.path("job").asText()));
        return out;
    }

    private void restart() throws Exception {
        authority.close();
        authority = TestDaemon.start(config, AuthorityTest.TOKENS);
    }

    @Test
    void theFirstHostsPart_choosesTheGroup_laterHostsPartsAreHeldToIt_andTheLastEndForgetsIt() throws Exception {
        assertThat(granted("node01", "7", "lic=1[same=id,scope=job]")).isEqualTo("SGE_HGR_lic=lb");
        assertThat(jobKeys().path("7").toString()).isEqualTo("{\"keys\":{\"lic\":\"lb\"},\"hosts\":[\"node01\"]}");
        assertThat(granted("node01", "9", "lic=3[id=la]")).isEqualTo("SGE_HGR_lic=la la la");
        assertThat(granted("node02", "7", "lic=1[same=id,scope=job]")).as("held to lb, not its own choice la")
                .isEqualTo("SGE_HGR_lic=lb");
        assertThat(jobKeys().path("7").path("hosts").toString()).isEqualTo("[\"node01\",\"node02\"]");
        end("node02", "7");
        assertThat(jobKeys().path("7").path("hosts").toString()).isEqualTo("[\"node01\"]");
        end("node01", "7");
        assertThat(jobKeys().has("7")).as("forgotten with the job's last part").isFalse();
        assertThat(granted("node02", "7", "lic=1[same=id,scope=job]")).as("a job of that number again chooses afresh")
                .isEqualTo("SGE_HGR_lic=la");
    }

    @Test
    void aPartTheJobsGroupCannotServe_isRefusedNamingIt_andLeavesNothing() throws Exception {
        assertThat(granted("node01", "21", "lic=3[same=id,scope=job]")).isEqualTo("SGE_HGR_lic=lb lb lb");
        call(Code.JOB_KEY, "{\"host\":\"node02\",\"job\":\"21\",\"keys\":{\"gpu\":\"0\"}}"); // its own maps' group
        assertThat(jobKeys().path("21").path("hosts").toString()).isEqualTo("[\"node01\",\"node02\"]");
        List<Frame> refused = start("node02", "21", "lic=3[same=id,scope=job]");
        assertThat(refused.get(0).code()).as(refused.toString()).isEqualTo(Code.ERROR.value());
        assertThat(refused.get(0).text(0)).isEqualTo("job node02:21 cannot be granted now: lic: the job's group id=lb "
                + "(chosen once for the whole job) has 0 free matching instances here, needs 3");
        assertThat(refused.get(0).text(1)).isEqualTo("busy");
        assertThat(held()).as("nothing granted to node02").containsExactly("node01:21");
        assertThat(jobKeys().path("21").path("hosts").toString()).as("node02, refused, holds no part: counted out")
                .isEqualTo("[\"node01\"]");
        restart();
        assertThat(jobKeys().path("21").path("hosts").toString()).as("nor after a replay").isEqualTo("[\"node01\"]");
        end("node01", "21");
        assertThat(granted("node02", "21", "lic=3[same=id,scope=job]")).isEqualTo("SGE_HGR_lic=lb lb lb");
    }

    @Test
    void theKey_outlivesRestartsAndCompaction_beforeTheSecondHostsPart() throws Exception {
        assertThat(granted("node01", "30", "lic=1[same=id,scope=job]")).isEqualTo("SGE_HGR_lic=lb");
        for (int restart = 0; restart < 2; restart++) { // the first replays the records, the second its compaction
            restart();
            assertThat(jobKeys().path("30").toString()).as("restart " + restart)
                    .isEqualTo("{\"keys\":{\"lic\":\"lb\"},\"hosts\":[\"node01\"]}");
        }
        granted("node01", "9", "lic=3[id=la]");
        assertThat(granted("node02", "30", "lic=1[same=id,scope=job]")).isEqualTo("SGE_HGR_lic=lb");
    }

    @Test
    void reconcile_keepsTheKeyOfAGlobalPartTheHostStillHolds_andLetsGoWithIt() throws Exception {
        List<Frame> a = start("node01", "40", "lic=1[same=id,scope=job]");
        JsonNode grant = JSON.readTree(a.get(0).text(0)).path("grants");
        // node01's own maps hold no group of job 40: it lists the job's global grant, not its keys.
        call(Code.RECONCILE, "{\"host\":\"node01\",\"jobs\":{\"40\":" + grant + "}}");
        assertThat(jobKeys().path("40").toString()).isEqualTo("{\"keys\":{\"lic\":\"lb\"},\"hosts\":[\"node01\"]}");
        granted("node01", "9", "lic=3[id=la]");
        assertThat(granted("node02", "40", "lic=1[same=id,scope=job]")).isEqualTo("SGE_HGR_lic=lb");
        call(Code.RECONCILE, "{\"host\":\"node01\",\"jobs\":{\"9\":{\"global\":{\"lic\":[\"la\",\"la\",\"la\"]}}}}");
        assertThat(held()).as("node01's part freed").containsExactly("node01:9", "node02:40");
        assertThat(jobKeys().path("40").path("hosts").toString()).isEqualTo("[\"node02\"]");
        call(Code.RECONCILE, "{\"host\":\"node02\",\"jobs\":{}}");
        assertThat(jobKeys().has("40")).isFalse();
    }

    @Test
    void reconcile_freeingAGlobalPartTheHostNoLongerLists_keepsItCountedInWhereItsOwnMapsHoldTheJobsGroups()
            throws Exception {
        call(Code.JOB_KEY, "{\"host\":\"node01\",\"job\":\"70\",\"keys\":{\"gpu\":\"1\"}}");
        granted("node01", "70", "lic=1[same=id,scope=job]");
        call(Code.RECONCILE, "{\"host\":\"node01\",\"jobs\":{},\"keys\":[\"70\"]}");
        assertThat(held()).as("the global part it no longer lists is freed").doesNotContain("node01:70");
        assertThat(jobKeys().path("70").toString()).as("its gpu group still held on node01")
                .isEqualTo("{\"keys\":{\"gpu\":\"1\",\"lic\":\"lb\"},\"hosts\":[\"node01\"]}");
        restart();
        assertThat(jobKeys().path("70").path("hosts").toString()).as("after a replay too").isEqualTo("[\"node01\"]");
    }

    @Test
    void aGrantWhoseKeyRecordIsMissing_teachesItAtTheHostsReconciliation() throws Exception {
        List<Frame> a = start("node01", "60", "lic=1[same=id,scope=job]");
        JsonNode grant = JSON.readTree(a.get(0).text(0)).path("grants");
        authority.close();
        Path journal = config.stateDir().resolve("journal");
        List<String> lines = Files.readAllLines(journal);
        lines.removeIf(l -> l.contains("\"op\":\"key\"")); // as an authority before this record kept it
        Files.write(journal, lines);
        authority = TestDaemon.start(config, AuthorityTest.TOKENS);
        assertThat(jobKeys().size()).isZero();
        call(Code.RECONCILE, "{\"host\":\"node01\",\"jobs\":{\"60\":" + grant + "}}");
        assertThat(jobKeys().path("60").toString()).isEqualTo("{\"keys\":{\"lic\":\"lb\"},\"hosts\":[\"node01\"]}");
    }

    @Test
    void aJobHoldingAHostMapsGroupAndAGlobalMapsGroup_isHeldToOneKeyPerMap() throws Exception {
        List<Frame> k = call(Code.JOB_KEY, "{\"host\":\"node01\",\"job\":\"50\",\"keys\":{\"gpu\":\"1\"}}");
        assertThat(k.get(0).text(0)).isEqualTo("{\"job\":\"50\",\"keys\":{\"gpu\":\"1\"}}");
        assertThat(granted("node01", "50", "lic=1[same=id,scope=job]")).isEqualTo("SGE_HGR_lic=lb");
        assertThat(jobKeys().path("50").toString())
                .isEqualTo("{\"keys\":{\"gpu\":\"1\",\"lic\":\"lb\"},\"hosts\":[\"node01\"]}");
        k = call(Code.JOB_KEY, "{\"host\":\"node02\",\"job\":\"50\",\"keys\":{\"gpu\":\"0\"}}");
        assertThat(k.get(0).text(0)).as("each map's key its own").isEqualTo("{\"job\":\"50\",\"keys\":{\"gpu\":\"1\","
                + "\"lic\":\"lb\"}}");
        granted("node01", "9", "lic=3[id=la]");
        assertThat(granted("node02", "50", "lic=1[same=id,scope=job]")).isEqualTo("SGE_HGR_lic=lb");
        end("node01", "50");
        end("node02", "50");
        assertThat(jobKeys().has("50")).isFalse();
    }
}
