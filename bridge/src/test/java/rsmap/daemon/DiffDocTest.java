// The DIFF table of docs/protocol.md ("Event stream and filters") against what rsmapd emits: every event a
// stream receives has exactly the fields of a row of its kind, in that order, and every row is seen.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.daemon.job.EventHub;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

class DiffDocTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern FIELD = Pattern.compile("`([a-z_]+)`(\\??)");

    /** One row: the event kind and its fields in order, each optional or not. */
    record Row(String kind, List<String> fields, Set<String> optional) {
        /** Whether {@code got} is this row's fields in order, an optional field present or not. */
        boolean matches(String gotKind, List<String> got) {
            if (!kind.equals(gotKind)) {
                return false;
            }
            List<String> expected = new ArrayList<>(fields);
            expected.removeIf(f -> optional.contains(f) && !got.contains(f));
            return expected.equals(got);
        }
    }

    @TempDir
    Path tmp;

    static List<Row> table() throws Exception {
        List<String> lines = Files.readAllLines(DaemonDocTest.DOC, StandardCharsets.UTF_8);
        int at = lines.indexOf("| event | fields | made by |");
        assertThat(at).as("the DIFF table of docs/protocol.md").isPositive();
        List<Row> rows = new ArrayList<>();
        for (int i = at + 2; i < lines.size() && lines.get(i).startsWith("| "); i++) {
            String[] cells = lines.get(i).split(" \\| ", 3);
            List<String> fields = new ArrayList<>();
            Set<String> optional = new LinkedHashSet<>();
            Matcher m = FIELD.matcher(cells[1]);
            while (m.find()) {
                fields.add(m.group(1));
                if (!m.group(2).isEmpty()) {
                    optional.add(m.group(1));
                }
            }
            rows.add(new Row(cells[0].substring(2).strip(), fields, optional));
        }
        return rows;
    }

    @Test
    void everyDiff_hasTheFieldsOfItsRowInTheDoc_andEveryRowIsEmitted() throws Exception {
        List<Row> rows = table();
        assertThat(rows).extracting(Row::kind).containsAll(EventHub.KINDS);
        Config config = TestDaemon.config(tmp, "gpu=2(0 1)", "reconcile_interval = 0");
        List<Frame> events = new ArrayList<>();
        try (Daemon daemon = TestDaemon.start(config)) {
            Session monitor = DaemonSessions.as(daemon, "root", 0, ProcessHandle.current().pid(), events);
            Session root = DaemonSessions.as(daemon, "root", 0, ProcessHandle.current().pid(), new ArrayList<>());
            monitor.onCommand(Frame.of(2, Code.START_EVENTS.value()));
            ok(root, Code.JOB_START, "{\"job\":\"7\",\"user\":\"alice\",\"request\":\"gpu=1\"}"); // grant
            ok(root, Code.REALLOC, "{\"job\":\"7\",\"add\":\"gpu=1\"}"); // alloc, resource-update
            ok(root, Code.REALLOC, "{\"job\":\"7\",\"sub\":\"gpu=1\"}"); // resource-update
            ok(root, Code.RELEASE, "{\"job\":\"7\"}"); // release (ids), free
            ok(root, Code.DRAIN, "{\"map\":\"gpu\",\"id\":\"0\"}"); // taint
            ok(root, Code.UNDRAIN, "{\"map\":\"gpu\",\"id\":\"0\"}"); // untaint
            ok(root, Code.JOB_END, "{\"job\":\"7\"}"); // release (the job)
            Path conf = config.complexes().resolveSibling("rsmapd.conf");
            Files.writeString(conf, Files.readString(conf).replace("gpu=2(0 1)", "gpu=3(0 1 2)"));
            ok(root, Code.RELOAD, null); // config
        }
        Set<Row> seen = new LinkedHashSet<>();
        for (Frame f : events) {
            if (f.code() != Code.DIFF.value()) {
                continue;
            }
            JsonNode diff = JSON.readTree(f.text(0));
            List<String> got = new ArrayList<>();
            diff.fieldNames().forEachRemaining(got::add);
            String kind = diff.path("event").asText();
            List<Row> match = rows.stream().filter(r -> r.matches(kind, got)).toList();
            assertThat(match).as("a row of docs/protocol.md's DIFF table for %s %s", kind, got).isNotEmpty();
            seen.addAll(match);
        }
        assertThat(seen).as("every row of the DIFF table was emitted").containsExactlyInAnyOrderElementsOf(rows);
    }

    private static void ok(Session s, Code code, String json) {
        List<Frame> r = s.onCommand(json == null ? Frame.of(3, code.value()) : Frame.of(3, code.value(), json));
        assertThat(r.get(r.size() - 1)).as("%s %s: %s", code, json, r).isEqualTo(Session.ok(3));
    }
}
