// health_command's output (docs/health.md, "rsmapd.conf"): one verdict per line, MAP ID ok or MAP ID taint
// REASON...; the lines that do not read are skipped with where and why, next to those that do.
package rsmap.daemon.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import rsmap.daemon.records.JournalRecord;
import rsmap.daemon.state.Taint;

class HealthCommandTest {
    @Test
    void parse_readsEachVerdict_andSkipsWhatDoesNotRead() {
        String[][] rows = {
            // line, verdict (map id ok|taint reason) or "skip: " and the start of why
            {"gpu 0 ok", "gpu 0 ok "},
            {"gpu 0 taint fan failed at 95 C", "gpu 0 taint fan failed at 95 C"},
            {"gpu   GPU-0b3f   taint   double-bit ECC", "gpu GPU-0b3f taint double-bit ECC"},
            {"gpu 0 taint", "gpu 0 taint check failed"},
            {"  # a comment", null},
            {"", null},
            {"gpu 0", "skip: line 1: expected 'MAP ID ok' or 'MAP ID taint REASON', got 'gpu 0'"},
            {"gpu 0 ok now", "skip: line 1: expected 'MAP ID ok'"},
            {"gpu 0 broken", "skip: line 1: expected 'MAP ID ok'"},
            {"gpu 0 taint a\u0007b", "skip: line 1: control characters"},
        };
        for (String[] row : rows) {
            HealthCommand.Run run = HealthCommand.parse(row[0] + "\n");
            assertThat(run.failed()).isEmpty();
            if (row[1] == null) {
                assertThat(run.verdicts()).as(row[0]).isEmpty();
                assertThat(run.skipped()).as(row[0]).isEmpty();
            } else if (row[1].startsWith("skip: ")) {
                assertThat(run.verdicts()).as(row[0]).isEmpty();
                assertThat(run.skipped()).as(row[0]).singleElement().asString().startsWith(row[1].substring(6));
            } else {
                HealthCommand.Verdict v = run.verdicts().get(0);
                assertThat(v.map() + " " + v.id() + " " + (v.ok() ? "ok" : "taint") + " " + v.reason()).as(row[0])
                        .isEqualTo(row[1]);
            }
        }
        assertThat(HealthCommand.parse("gpu 0 ok\nnonsense\ngpu 1 taint hot\n").skipped())
                .containsExactly("line 2: expected 'MAP ID ok' or 'MAP ID taint REASON', got 'nonsense'");
        assertThat(HealthCommand.parse("gpu 0 taint " + "x".repeat(500)).verdicts().get(0).reason())
                .hasSize(Taint.MAX_REASON);
    }

    @Test
    void healthRecord_roundTrips_andARecordThatDoesNotMakeSense_isRefused() throws IOException {
        Taint t = new Taint("gpu", "0", Taint.Source.ADMIN, "fan", Instant.parse("2026-12-03T12:03:05Z"));
        JournalRecord.Health h = new JournalRecord.Health(t, true);
        assertThat(h.line()).isEqualTo("{\"v\":1,\"op\":\"health\",\"map\":\"gpu\",\"id\":\"0\",\"source\":\"admin\","
                + "\"reason\":\"fan\",\"since\":\"2026-12-03T12:03:05Z\",\"tainted\":true}");
        assertThat(JournalRecord.parse(h.line())).isEqualTo(h);
        for (String bad : List.of("{\"v\":1,\"op\":\"health\",\"map\":\"gpu\",\"id\":\"0\",\"source\":\"god\",\"reason\":\"\","
                + "\"since\":\"2026-12-03T12:03:05Z\",\"tainted\":true}",
            "{\"v\":1,\"op\":\"health\",\"map\":\"gpu\",\"id\":\"0\",\"source\":\"admin\",\"reason\":\"\",\"since\":\"noon\","
                + "\"tainted\":true}",
            "{\"v\":1,\"op\":\"health\",\"map\":\"gpu\",\"source\":\"admin\",\"reason\":\"\",\"tainted\":false}")) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> JournalRecord.parse(bad)).as(bad)
                    .isInstanceOf(IOException.class).hasMessageContaining("health record");
        }
    }
}
