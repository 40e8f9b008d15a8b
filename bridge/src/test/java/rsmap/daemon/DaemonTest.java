// rsmapd over its real socket: JOB_START grants and answers the environment, JOB_END gives back, a job
// that cannot be granted is refused with the reason, and a restart replays the journal exactly.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

class DaemonTest {
    @TempDir
    Path tmp;
    Config config;
    Daemon daemon;

    @BeforeEach
    void start() throws Exception {
        config = TestDaemon.config(tmp, "gpu=8(0 0 0 0 1 1 1 1)", "global_complex_values = lic=2(la lb)");
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

    @Test
    void jobStart_grantsAndAnswersTheEnvironment_jobEndGivesBack() throws Exception {
        try (TestClient c = client()) {
            List<Frame> start = c.call(json(2, Code.JOB_START, "{\"job\":\"7\",\"task\":\"1\",\"slots\":1,"
                    + "\"request\":\"gpu=4[same=id],lic=1\"}"));
            assertThat(start).hasSize(2);
            assertThat(start.get(0).args()).hasSize(3);
            assertThat(start.get(0).text(1)).isEqualTo("SGE_HGR_gpu=0 0 0 0");
            assertThat(start.get(0).text(2)).isEqualTo("SGE_HGR_lic=la");
            assertThat(start.get(0).text(0)).isEqualTo("{\"job\":\"7.1\",\"grants\":{\"node01\":{\"gpu\":[\"0\",\"0\",\"0\","
                    + "\"0\"]},\"global\":{\"lic\":[\"la\"]}},\"env\":{\"SGE_HGR_gpu\":\"0 0 0 0\",\"SGE_HGR_lic\":\"la\"}}");
            assertThat(start.get(1)).isEqualTo(Session.ok(2));
            assertThat(c.call(json(3, Code.JOB_END, "{\"job\":\"7\",\"task\":\"1\"}"))).containsExactly(Session.ok(3));
            assertThat(c.call(json(4, Code.JOB_END, "{\"job\":\"7\",\"task\":\"1\"}"))).containsExactly(
                    Session.error(4, "job 7.1 holds nothing on node01"));
        }
    }

    @Test
    void jobStart_cannotBeGranted_isAnErrorWithTheReason_andLeavesNothing() throws Exception {
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, "{\"job\":\"1\",\"request\":\"gpu=1\"}"));
            c.call(json(3, Code.JOB_START, "{\"job\":\"2\",\"request\":\"gpu=1[id=1]\"}"));
            assertThat(c.call(json(4, Code.JOB_START, "{\"job\":\"3\",\"request\":\"gpu=4[same=id]\"}")))
                    .containsExactly(Session.error(4, "job 3 cannot be granted now: gpu: no group large enough: needs 4 "
                            + "free instances agreeing on id, the largest group (0) has 3"));
            assertThat(c.call(json(5, Code.JOB_START, "{\"job\":\"4\",\"request\":\"gpu=1[scope=job]\"}")))
                    .containsExactly(Session.error(5, "request: column 7: scope= needs same="));
            assertThat(daemon.cluster().runningJobs()).containsExactly("1", "2");
        }
    }

    @Test
    void restart_replaysTheJournal_sameGrantsExactly() throws Exception {
        try (TestClient c = client()) {
            c.call(json(2, Code.JOB_START, "{\"job\":\"1\",\"request\":\"gpu=1\"}"));
            c.call(json(3, Code.JOB_START, "{\"job\":\"2\",\"request\":\"gpu=4[same=id]\"}"));
            c.call(json(4, Code.JOB_START, "{\"job\":\"3\",\"request\":\"gpu=2,lic=1\"}"));
            c.call(json(5, Code.JOB_END, "{\"job\":\"1\"}"));
        }
        String before = query();
        daemon.close();
        daemon = TestDaemon.start(config);
        assertThat(query()).isEqualTo(before);
        assertThat(daemon.cluster().runningJobs()).containsExactly("2", "3");
    }

    @Test
    void badArguments_areErrors() throws Exception {
        try (TestClient c = client()) {
            assertThat(c.call(json(2, Code.JOB_START, "not json")).get(0).text(0)).startsWith("the argument is not JSON");
            assertThat(c.call(json(3, Code.JOB_START, "{\"job\":\"../x\",\"request\":\"gpu=1\"}")).get(0).text(0))
                    .startsWith("\"job\" is missing or not a job id");
            assertThat(c.call(Frame.of(4, Code.JOB_END.value())).get(0).text(0)).isEqualTo("expected one JSON argument, got 0");
        }
    }

    private String query() throws Exception {
        try (TestClient c = client()) {
            return c.call(Frame.of(9, Code.QUERY.value())).get(0).text(0);
        }
    }
}
