// JsonText writes what every job start writes (its start record, its answer's job object) straight into a
// buffer: the same bytes Jackson's tree gives for the same fields, whatever the strings hold (seeded draws).
package rsmap.daemon.records;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import rsmap.alloc.Grant;
import rsmap.daemon.job.Views;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.JobId;

class JsonTextTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long SEED = 27;
    /** Characters a hostile or careless client may put in a job's request or user: every escape class. */
    private static final char[] SPECIAL = {'"', '\\', '/', '\b', '\t', '\n', '\f', '\r', 0, 1, 0x1b, 0x1f, 0x7f,
        '\u00e9', '\u2028', '\u2029', '\ud83d', '\ude00', '\ufeff', '\uffff'};

    /** A job id: its text is only [A-Za-z0-9_+-] and '.', nothing to escape. */
    private static JobId jobId(Random r) {
        String chars = "abcXYZ019_+-";
        StringBuilder b = new StringBuilder();
        for (int n = 1 + r.nextInt(8); n > 0; n--) {
            b.append(chars.charAt(r.nextInt(chars.length())));
        }
        return new JobId("", b.toString(), r.nextBoolean() ? "" : Integer.toString(1 + r.nextInt(1000)));
    }

    private static String draw(Random r, int max) {
        StringBuilder b = new StringBuilder();
        int n = r.nextInt(max + 1);
        for (int i = 0; i < n; i++) {
            switch (r.nextInt(4)) {
                case 0 -> b.append(SPECIAL[r.nextInt(SPECIAL.length)]);
                case 1 -> b.append((char) r.nextInt(0x20));
                case 2 -> b.append((char) r.nextInt(0x10000));
                default -> b.append((char) (0x20 + r.nextInt(0x5f)));
            }
        }
        return b.toString();
    }

    private static Grant grant(Random r) {
        Map<String, Map<String, List<String>>> byHost = new LinkedHashMap<>();
        for (int h = r.nextInt(3); h > 0; h--) {
            Map<String, List<String>> maps = new LinkedHashMap<>();
            for (int m = r.nextInt(3); m > 0; m--) {
                List<String> ids = new ArrayList<>();
                for (int i = r.nextInt(4); i > 0; i--) {
                    ids.add(draw(r, 4));
                }
                maps.put(draw(r, 5), ids);
            }
            byHost.put(draw(r, 6), maps);
        }
        return new Grant(byHost);
    }

    private static Map<String, String> strings(Random r) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = r.nextInt(4); i > 0; i--) {
            m.put(draw(r, 8), draw(r, 12));
        }
        return m;
    }

    /** The start record as the tree wrote it before JsonText. */
    private static String tree(JournalRecord.Started s) {
        ObjectNode r = JSON.createObjectNode().put("v", JournalRecord.VERSION).put("op", "start").put("job", s.job().toString())
                .put("user", s.user()).put("request", s.request()).put("slots", s.slots());
        JournalFields.put(r, "grant", s.grant());
        if (!s.releasing().isEmpty()) {
            JournalFields.put(r, "releasing", s.releasing());
        }
        if (!s.remote().isEmpty()) {
            JournalFields.put(r, "remote", s.remote());
        }
        if (!s.pids().isEmpty()) {
            ObjectNode p = r.putObject("pids");
            s.pids().forEach((pid, start) -> p.put(Long.toString(pid), start.toString()));
        }
        JournalFields.putSlices(r, s.slices());
        return r.toString();
    }

    @Test
    void anyString_isWrittenAsJacksonWritesIt() {
        Random r = new Random(SEED);
        for (int i = 0; i < 20_000; i++) {
            String k = "k" + draw(r, 6);
            String v = draw(r, 24);
            long n = r.nextLong();
            assertThat(new JsonText().put(k, v).put("n", n).text()).as("draw %d", i)
                    .isEqualTo(JSON.createObjectNode().put(k, v).put("n", n).toString());
        }
        assertThat(new JsonText().put("null", (String) null).text()).isEqualTo("{\"null\":null}");
    }

    @Test
    void anyStartRecord_isTheLineTheTreeWrote_andReadsBackTheSame() throws Exception {
        Random r = new Random(SEED);
        for (int i = 0; i < 5_000; i++) {
            Map<Long, Instant> pids = new LinkedHashMap<>();
            for (int p = r.nextInt(3); p > 0; p--) {
                pids.put((long) r.nextInt(1 << 22) + 1, Instant.ofEpochSecond(r.nextInt(2_000_000_000), r.nextInt(1_000_000_000)));
            }
            JournalRecord.Started s = new JournalRecord.Started(jobId(r), draw(r, 8), draw(r, 30), 1 + r.nextInt(100),
                    grant(r), r.nextBoolean() ? Grant.NONE : grant(r), r.nextBoolean() ? Grant.NONE : grant(r), pids,
                    r.nextBoolean() ? Map.of() : Map.of("0:1g.10gb@" + r.nextInt(7), r.nextBoolean() ? "" : "MIG-" + i));
            assertThat(s.line()).as("draw %d", i).isEqualTo(tree(s));
        }
        JournalRecord.Started real = new JournalRecord.Started(JobId.parse("7.1").orElseThrow(), "alice", "gpu=2[same=id],mig=1[profile=1g.10gb]", 2,
                new Grant(Map.of("node01", Map.of("gpu", List.of("0", "0")))), Grant.NONE, Grant.NONE,
                Map.of(4711L, Instant.parse("2026-12-06T23:30:00.123456789Z")), Map.of("0:1g.10gb@6", "MIG-a"));
        assertThat(JournalRecord.parse(real.line())).isEqualTo(real);
    }

    @Test
    void anyJob_isTheAnswersObjectTheTreeWrote() {
        Random r = new Random(SEED);
        for (int i = 0; i < 5_000; i++) {
            Job j = new Job(jobId(r), draw(r, 8), draw(r, 30), 1 + r.nextInt(100), grant(r),
                    r.nextBoolean() ? Grant.NONE : grant(r), Grant.NONE, strings(r), Map.of());
            assertThat(Views.jobText(j)).as("draw %d", i).isEqualTo(Views.job(j).toString());
        }
    }
}
