// docs/protocol.md, "The journal": an authority stamps every record with its lease's epoch; a record without
// one is of epoch 0 (old journals read as before); on replay a record of an older epoch after a newer one
// is refused, and a takeover compacts the journal stamped with the new epoch.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.authority.AuthorityTest;
import rsmap.daemon.config.Config;
import rsmap.daemon.records.JournalRecord;
import rsmap.journal.Journal;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.daemon.state.JobId;

class EpochReplayTest {
    @TempDir
    Path tmp;

    @Test
    void stamped_table_readsBackItsEpoch_unstampedIsEpochZero() throws Exception {
        String line = new JournalRecord.Ended(JobId.parse("node01:7").orElseThrow(), "epilog").line();
        Object[][] rows = {
            {line, 0L, line},
            {JournalRecord.stamped(line, 0), 0L, line},
            {JournalRecord.stamped(line, 3), 3L, "{\"v\":1,\"epoch\":3,\"op\":\"end\",\"job\":\"node01:7\",\"why\":\"epilog\"}"},
        };
        for (Object[] row : rows) {
            assertThat(JournalRecord.epoch((String) row[0])).as((String) row[0]).isEqualTo(row[1]);
            assertThat(row[0]).isEqualTo(row[2]);
            assertThat(JournalRecord.parse((String) row[0])).isEqualTo(JournalRecord.parse(line));
        }
        for (String bad : new String[] {"{\"v\":1,\"epoch\":-1,\"op\":\"end\"}", "{\"v\":1,\"epoch\":\"2\",\"op\":\"end\"}"}) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> JournalRecord.epoch(bad)).as(bad)
                    .isInstanceOf(java.io.IOException.class).hasMessageContaining("epoch");
        }
    }

    private static List<Frame> call(Daemon d, Code code, String json) {
        Session s = DaemonSessions.as(d, "root", 0, 0, new ArrayList<>());
        return s.onCommand(Frame.of(2, code.value(), json));
    }

    @Test
    void aRecordOfAnOlderEpochAfterANewerOne_isNotReplayed_andTheTakeoverStampsItsOwnEpoch() throws Exception {
        Config config = AuthorityTest.authorityConfig(tmp, rsmap.wire.Ports.free(), "lic=2(la lb)");
        try (Daemon d = TestDaemon.start(config, AuthorityTest.TOKENS)) {
            for (String job : new String[] {"7", "8"}) {
                List<Frame> r = call(d, Code.JOB_START, "{\"host\":\"node01\",\"job\":\"" + job + "\",\"user\":\"alice\","
                        + "\"request\":\"lic=1\"}");
                assertThat(r.get(r.size() - 1).code()).as(r.toString()).isEqualTo(Code.OK.value());
            }
        }
        Path file = config.stateDir().resolve("journal");
        List<String> lines;
        try (Journal j = Journal.open(file)) {
            lines = j.replayed();
            assertThat(lines).hasSize(3).allMatch(l -> l.startsWith("{\"v\":1,\"epoch\":1,"));
            // the configuration and job 7 as a later epoch wrote them; job 8 by a holder that had lost the lease
            j.compact(List.of(lines.get(0).replace("\"epoch\":1", "\"epoch\":2"),
                    lines.get(1).replace("\"epoch\":1", "\"epoch\":2"), lines.get(2)));
        }
        try (Daemon d = TestDaemon.start(config, AuthorityTest.TOKENS)) {
            assertThat(d.jobs()).containsOnlyKeys("node01:7");
            assertThat(String.join("\n", d.log())).contains("record 3 is of epoch 1 after one of epoch 2: written by an"
                    + " authority that had lost its lease; not replayed");
        }
        try (Journal j = Journal.open(file)) {
            assertThat(j.replayed()).hasSize(2).allMatch(l -> l.startsWith("{\"v\":1,\"epoch\":2,"));
        }
    }
}
