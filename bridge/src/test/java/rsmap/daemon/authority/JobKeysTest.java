// docs/cluster.md, "One group for the whole job", in one JVM: the authority's JOB_KEY (first proposal wins,
// also for two hosts asking at the same moment; bad arguments refused changing nothing; the record kept
// over restarts and compaction), and a host without an authority deciding scope=job alone.
package rsmap.daemon.authority;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.Daemon;
import rsmap.daemon.DaemonSessions;
import rsmap.daemon.TestDaemon;
import rsmap.daemon.config.Config;
import rsmap.daemon.records.JournalRecord;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Ports;
import rsmap.wire.Session;
import rsmap.daemon.state.JobId;

@Timeout(60)
class JobKeysTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;
    Config config;
    Daemon authority;

    @BeforeEach
    void start() throws Exception {
        config = AuthorityTest.authorityConfig(tmp.resolve("authority"), Ports.free(), "lic=1(la)");
        authority = TestDaemon.start(config, AuthorityTest.TOKENS);
    }

    @AfterEach
    void stop() throws Exception {
        if (authority != null) {
            authority.close();
        }
    }

    private static List<Frame> call(Daemon d, Code code, String json) {
        Session s = DaemonSessions.as(d, "root", 0, 0, new ArrayList<>());
        return s.onCommand(Frame.of(2, code.value(), json));
    }

    /** JOB_KEY of {@code host} for {@code job} proposing {@code key} for gpu: the key answered. */
    private String ask(String host, String job, String key) throws Exception {
        String[] jt = job.split("\\.");
        List<Frame> a = call(authority, Code.JOB_KEY, "{\"host\":\"" + host + "\",\"job\":\"" + jt[0]
                + (jt.length > 1 ? "\",\"task\":\"" + jt[1] : "") + "\",\"keys\":{\"gpu\":\"" + key + "\"}}");
        assertThat(a.get(a.size() - 1)).as(a.toString()).isEqualTo(Session.ok(2));
        return JSON.readTree(a.get(0).text(0)).path("keys").path("gpu").asText();
    }

    private JsonNode jobKeys() throws Exception {
        return JSON.readTree(call(authority, Code.QUERY, "{\"cluster\":true}").get(0).text(0)).path("job_keys");
    }

    @Test
    void theFirstProposalWins_laterOnesAreAnsweredWithIt_andTheLastHostsEndForgetsIt() throws Exception {
        assertThat(ask("node01", "7", "0")).isEqualTo("0");
        assertThat(ask("node02", "7", "1")).as("held to the first host's group").isEqualTo("0");
        assertThat(ask("node01", "7.2", "1")).as("another task is another job").isEqualTo("1");
        assertThat(jobKeys().path("7").toString()).isEqualTo("{\"keys\":{\"gpu\":\"0\"},\"hosts\":[\"node01\",\"node02\"]}");
        call(authority, Code.JOB_END, "{\"host\":\"node02\",\"job\":\"7\"}");
        assertThat(jobKeys().path("7").path("hosts").toString()).isEqualTo("[\"node01\"]");
        call(authority, Code.JOB_END, "{\"host\":\"node01\",\"job\":\"7\"}");
        assertThat(jobKeys().has("7")).isFalse();
        assertThat(ask("node02", "7", "1")).as("a job of that number again chooses afresh").isEqualTo("1");
    }

    @Test
    void reconcile_letsGoOfTheJobsAHostNoLongerLists_andABadListChangesNothing() throws Exception {
        ask("node01", "7", "0");
        ask("node01", "8", "1");
        ask("node02", "8", "0");
        List<Frame> bad = call(authority, Code.RECONCILE, "{\"host\":\"node01\",\"jobs\":{},\"keys\":[\"node02:7\"]}");
        assertThat(bad.get(0).text(0)).startsWith("RECONCILE: \"keys\" holds a job id");
        assertThat(bad.get(0).text(1)).isEqualTo("malformed");
        assertThat(jobKeys().size()).isEqualTo(2);
        call(authority, Code.RECONCILE, "{\"host\":\"node01\",\"jobs\":{},\"keys\":[\"7\"]}");
        assertThat(jobKeys().toString()).isEqualTo("{\"7\":{\"keys\":{\"gpu\":\"0\"},\"hosts\":[\"node01\"]},"
                + "\"8\":{\"keys\":{\"gpu\":\"1\"},\"hosts\":[\"node02\"]}}");
        call(authority, Code.RECONCILE, "{\"host\":\"node02\",\"jobs\":{}}");
        assertThat(jobKeys().toString()).isEqualTo("{\"7\":{\"keys\":{\"gpu\":\"0\"},\"hosts\":[\"node01\"]}}");
    }

    @Test
    void twoHostsAskingAtTheSameMoment_areAnsweredOneKey() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int run = 0; run < 100; run++) {
                String job = Integer.toString(100 + run);
                CountDownLatch go = new CountDownLatch(1);
                Future<String> a = pool.submit(() -> {
                    go.await();
                    return ask("node01", job, "0");
                });
                Future<String> b = pool.submit(() -> {
                    go.await();
                    return ask("node02", job, "1");
                });
                go.countDown();
                assertThat(a.get()).as("run " + run).isEqualTo(b.get()).isIn("0", "1");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Rows: JOB_KEY's argument, the start of the ERROR's reason; the category is malformed for all. */
    private static final String[][] BAD = {
        {"{\"job\":\"7\",\"keys\":{\"gpu\":\"0\"}}", "an authority grants jobs of hosts"},
        {"{\"host\":\"node01\",\"job\":\"7\"}", "JOB_KEY needs \"keys\""},
        {"{\"host\":\"node01\",\"job\":\"7\",\"keys\":{}}", "JOB_KEY needs \"keys\""},
        {"{\"host\":\"node01\",\"job\":\"7\",\"keys\":[\"0\"]}", "JOB_KEY needs \"keys\""},
        {"{\"host\":\"node01\",\"job\":\"7\",\"keys\":{\"gpu\":0}}", "JOB_KEY: \"keys\" maps a map name"},
        {"{\"host\":\"node01\",\"job\":\"7\",\"keys\":{\"gpu\":\"\"}}", "JOB_KEY: \"keys\" maps a map name"},
        {"{\"host\":\"node01\",\"job\":\"7\",\"keys\":{\"gpu\":\"0\"},\"slots\":1}", "JOB_KEY: unknown key"},
        {"{\"host\":\"node01\",\"job\":\"7 7\",\"keys\":{\"gpu\":\"0\"}}", "\"job\" is missing or not a job id"},
    };

    @Test
    void badArguments_areRefusedAsMalformed_andRecordNothing() throws Exception {
        for (String[] row : BAD) {
            List<Frame> a = call(authority, Code.JOB_KEY, row[0]);
            assertThat(a.get(0).code()).as(row[0]).isEqualTo(Code.ERROR.value());
            assertThat(a.get(0).text(0)).as(row[0]).startsWith(row[1]);
            assertThat(a.get(0).text(1)).as(row[0]).isEqualTo("malformed");
        }
        assertThat(jobKeys().size()).isZero();
    }

    @Test
    void theRecordOutlivesRestarts_andCompaction() throws Exception {
        ask("node01", "7", "0");
        ask("node02", "7", "1");
        ask("node01", "8", "1");
        call(authority, Code.JOB_END, "{\"host\":\"node01\",\"job\":\"8\"}");
        for (int restart = 0; restart < 2; restart++) { // the first replays the records, the second its compaction
            authority.close();
            authority = TestDaemon.start(config, AuthorityTest.TOKENS);
            assertThat(jobKeys().toString()).as("restart " + restart)
                    .isEqualTo("{\"7\":{\"keys\":{\"gpu\":\"0\"},\"hosts\":[\"node01\",\"node02\"]}}");
        }
        assertThat(ask("node03", "7", "1")).isEqualTo("0");
    }

    @Test
    void aKeyRecord_readsBackAsWritten_andABadOneStopsTheReplayNamingIt() throws Exception {
        JournalRecord.Keyed k = new JournalRecord.Keyed(JobId.parse("7.3").orElseThrow(), new rsmap.alloc.GroupKeys(java.util.Map.of("gpu", "0",
                "nic", "1")), List.of("node01", "node02"));
        assertThat(k.line()).isEqualTo("{\"v\":1,\"op\":\"key\",\"job\":\"7.3\",\"keys\":{\"gpu\":\"0\",\"nic\":\"1\"},"
                + "\"hosts\":[\"node01\",\"node02\"]}");
        assertThat(JournalRecord.parse(k.line())).isEqualTo(k);
        for (String bad : List.of("{\"v\":1,\"op\":\"key\",\"job\":\"7\",\"hosts\":[]}",
                "{\"v\":1,\"op\":\"key\",\"job\":\"7\",\"keys\":{\"gpu\":1},\"hosts\":[]}",
                "{\"v\":1,\"op\":\"key\",\"job\":\"7\",\"keys\":{\"gpu\":\"1\"},\"hosts\":[\"no host\"]}")) {
            assertThat(org.assertj.core.api.Assertions.catchThrowableOfType(() -> JournalRecord.parse(bad),
                    java.io.IOException.class)).as(bad).isNotNull().hasMessageContaining("key record");
        }
    }

    @Test
    void withoutAnAuthority_scopeJobIsDecidedByTheHostAlone() throws Exception {
        authority.close();
        authority = TestDaemon.start(TestDaemon.config(tmp.resolve("alone"), "gpu=5(0 0 0 1 1)", "host = node02"));
        List<Frame> a = call(authority, Code.JOB_START, "{\"job\":\"7\",\"request\":\"gpu=2[same=id,scope=job]\"}");
        assertThat(a.get(0).text(1)).as("best fit on this host: card 1").isEqualTo("SGE_HGR_gpu=1 1");
    }
}
