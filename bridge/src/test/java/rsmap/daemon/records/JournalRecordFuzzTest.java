// Jazzer fuzz test of the journal's record parser (what start-up replays): any line gives a record or one
// IOException saying what does not make sense, never another exception; a record that parses writes a line
// that parses back to the same record.
package rsmap.daemon.records;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;

class JournalRecordFuzzTest {
    /** Pieces a record is put together from, beside the raw bytes. */
    private static final String[] PIECES = {"\"v\":1", "\"op\":\"start\"", "\"op\":\"change\"", "\"op\":\"end\"",
        "\"job\":\"7\"", "\"job\":\"8.3\"", "\"user\":\"alice\"", "\"request\":\"mig=1\"", "\"slots\":1", "\"slots\":0",
        "\"why\":\"realloc\"", "\"why\":\"release\"", "\"alloc_id\":4", "\"grant\":{\"node01\":{\"mig\":[\"0:1g.10gb@6\"]}}",
        "\"releasing\":{\"node01\":{\"mig\":[\"0:2g.20gb@4\"]}}", "\"releasing\":{}", "\"grant\":{}",
        "\"slices\":{\"0:1g.10gb@6\":\"MIG-1\"}", "\"slices\":{\"0\":\"MIG-1\"}", "\"slices\":{\"0:1g.10gb@6\":\"\"}",
        "\"slices\":[]", "\"slices\":{\"0:1g.10gb@6\":7}", "\"pids\":{\"4711\":\"2026-12-02T17:15:22.130Z\"}",
        "\"remote\":{\"pending\":{}}", "\"epoch\":3", "\"x\":null", "\"pids\":{\"x\":\"2026\"}", "\"op\":\"enter\"",
        "\"pid\":4711", "\"pid_start\":\"yesterday\"", "\"slices\":{\"0:1g.10gb@5\":\"\"}", "\"slices\":{\"0:1g.10gb@5\":\" x\"}",
        "\"op\":\"health\"", "\"since\":\"now\"", "\"op\":\"key\"", "\"keys\":{\"gpu\":\"1\"}", "\"hosts\":[\"node01\"]",
        "\"op\":\"config\"", "\"generation\":1", "\"complex_values\":\"gpu=1\"", "\"global_complex_values\":\"NONE\"",
        "\"op\":\"alloc_ids\"", "\"up_to\":9", "\"op\":\"remote\"", "\"remote\":{\"global\":{\"lic\":[\"a\"]}}"};

    @FuzzTest
    void anyLine_aRecordOrOneIoException_andARecordReadsBackTheSame(FuzzedDataProvider data) {
        String line;
        if (data.consumeBoolean()) {
            StringBuilder b = new StringBuilder("{");
            int n = data.consumeInt(0, 10);
            for (int i = 0; i < n; i++) {
                b.append(i == 0 ? "" : ",").append(data.pickValue(PIECES));
            }
            line = b.append('}').toString();
        } else {
            line = data.consumeRemainingAsString();
        }
        JournalRecord r;
        try {
            r = JournalRecord.parse(line);
        } catch (IOException e) {
            assertThat(e.getMessage()).as(line).isNotBlank().doesNotContain("\n");
            return;
        }
        try {
            assertThat(JournalRecord.parse(r.line())).as(line).isEqualTo(r);
        } catch (IOException e) {
            throw new AssertionError(line + " read as " + r + ", whose line does not read back: " + e.getMessage(), e);
        }
    }
}
