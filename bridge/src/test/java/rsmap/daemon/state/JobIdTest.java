// A job's identity: one parse and one canonical text for the commands, the journal and the link's arguments
// (docs/protocol.md's "job"/"task", the journal's "job", an authority's HOST:JOB).
package rsmap.daemon.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import rsmap.wire.Frame;

class JobIdTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void parse_table_canonicalTextOrNothing() {
        Object[][] rows = {
            // text, host, job, task (null: not a job id)
            {"7", "", "7", ""},
            {"7.3", "", "7", "3"},
            {"node01:7", "node01", "7", ""},
            {"node01.example.org:job_+-x.12", "node01.example.org", "job_+-x", "12"},
            {"7.", null, null, null},
            {".3", null, null, null},
            {"7.x", null, null, null},
            {"7.3.4", null, null, null},
            {":7", null, null, null},
            {"a b", null, null, null},
            {"", null, null, null},
            {"x".repeat(101), null, null, null},
            {"7." + "1".repeat(11), null, null, null},
        };
        for (Object[] row : rows) {
            Optional<JobId> id = JobId.parse((String) row[0]);
            if (row[1] == null) {
                assertThat(id).as((String) row[0]).isEmpty();
            } else {
                assertThat(id).as((String) row[0]).contains(new JobId((String) row[1], (String) row[2], (String) row[3]));
                assertThat(id.get().toString()).isEqualTo(row[0]);
            }
        }
    }

    @Test
    void parseOfToString_isTheSameId_forRandomIds() {
        long seed = System.nanoTime();
        Random r = new Random(seed);
        String chars = "abcXYZ019_+-";
        for (int i = 0; i < 2000; i++) {
            StringBuilder job = new StringBuilder();
            for (int n = 1 + r.nextInt(12); n > 0; n--) {
                job.append(chars.charAt(r.nextInt(chars.length())));
            }
            JobId id = new JobId(r.nextBoolean() ? "" : "node" + r.nextInt(100), job.toString(),
                    r.nextBoolean() ? "" : Integer.toString(r.nextInt(1_000_000)));
            assertThat(JobId.parse(id.toString())).as("seed " + seed).contains(id);
        }
    }

    @Test
    void of_readsACommandsJobAndTask_andSaysWhatIsWrong() throws Exception {
        Set<String> keys = Set.of("host", "job", "task");
        assertThat(JobId.of(args("{\"job\":\"7\",\"task\":\"undefined\"}", keys))).isEqualTo(new JobId("", "7", ""));
        assertThat(JobId.of(args("{\"job\":\"7\",\"task\":\"3\"}", keys)).toString()).isEqualTo("7.3");
        assertThat(JobId.ofHost(args("{\"host\":\"node01\",\"job\":\"7\"}", keys)).toString()).isEqualTo("node01:7");
        Object[][] wrong = {
            {"{\"task\":\"3\"}", "\"job\" is missing or not a job id: ''"},
            {"{\"job\":\"7:8\"}", "\"job\" is missing or not a job id: '7:8'"},
            {"{\"job\":\"7\",\"task\":\"x\"}", "\"task\" is a task number or \"undefined\", not 'x'"},
            {"{\"host\":\"a b\",\"job\":\"7\"}", "\"host\" is a host name, not 'a b'"},
        };
        for (Object[] row : wrong) {
            assertThatThrownBy(() -> JobId.of(args((String) row[0], keys))).as((String) row[0])
                    .isInstanceOf(Refusal.class).hasMessage((String) row[1]);
        }
        assertThatThrownBy(() -> JobId.ofHost(args("{\"job\":\"7\"}", keys)))
                .hasMessage("an authority grants jobs of hosts: name the job's \"host\"");
    }

    @Test
    void fieldsAndSpoolDir_areTheFormsTheLinkAndExecdUse() {
        assertThat(new JobId("node01", "7", "3").fields(JSON.createObjectNode()).toString())
                .isEqualTo("{\"job\":\"7\",\"task\":\"3\"}");
        assertThat(new JobId("", "7", "").fields(JSON.createObjectNode()).toString()).isEqualTo("{\"job\":\"7\"}");
        assertThat(new JobId("", "7", "").spoolDir()).isEqualTo("7.1");
        assertThat(new JobId("", "7", "4").spoolDir()).isEqualTo("7.4");
        assertThat(new JobId("node01", "7", "4").withoutTask().toString()).isEqualTo("node01:7");
        assertThat(new JobId("node01", "7", "4").local().toString()).isEqualTo("7.4");
    }

    private static Args args(String json, Set<String> keys) throws Refusal {
        return Args.of("TEST", Frame.of(2, 0x8001, json), keys);
    }
}
