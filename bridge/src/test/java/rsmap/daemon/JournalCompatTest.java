// An upgraded package must not lose grants: a journal written by release 0.1.0 (checked in as written by
// that release's rsmapd and hooks: three grants, a start, an enter, an end, a RELOAD and another start) is
// read by this one, every grant exactly.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Config;
import rsmap.daemon.job.EventHub;
import rsmap.daemon.job.Views;

class JournalCompatTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final Path RELEASE_0_1 = Path.of("src", "test", "resources", "journal", "release-0.1.0.journal");
    /** The configuration of the journal's second generation. */
    static final String VALUES = "gpu=4(0[devices=/dev/zero,memory=80G] 0[devices=/dev/zero,memory=80G] "
            + "1[memory=40G] 1[memory=40G]),nic=3(ib0[numa_node=0] ib1[numa_node=1] ib2[numa_node=1])";

    @TempDir
    Path tmp;

    private Daemon open(Config config) throws Exception {
        return new Daemon(config, ComplexTable.parse(Files.readString(config.complexes())), tmp.resolve("rsmapd.conf"));
    }

    @Test
    void aJournalOfRelease010_isReadWithEveryGrantExactly_beforeAndAfterCompaction() throws Exception {
        Config config = TestDaemon.config(tmp, VALUES, "global_complex_values = lic=2(la lb)", "reconcile_interval = 0");
        Files.createDirectories(config.stateDir());
        Files.copy(RELEASE_0_1, config.stateDir().resolve("journal"));
        for (int round = 0; round < 2; round++) { // as written, then as this release compacted it
            try (Daemon d = open(config)) {
                assertThat(d.generation()).isEqualTo(2);
                assertThat(d.cluster().runningJobs()).containsExactly("7", "8.3", "10");
                JsonNode q = JSON.readTree(Views.state(d.state(), d.access(), new rsmap.wire.Session.Peer("root", "root", 0, 0, 0),
                        EventHub.Filters.NONE, null).toString());
                assertThat(q.path("jobs").toString()).isEqualTo("[{\"job\":\"7\",\"user\":\"alice\",\"request\":"
                        + "\"gpu=2[same=id],lic=1\",\"slots\":1,\"grants\":{\"node01\":{\"gpu\":[\"0\",\"0\"]},\"global\":"
                        + "{\"lic\":[\"la\"]}},\"env\":{\"SGE_HGR_gpu\":\"0 0\",\"SGE_HGR_lic\":\"la\"}},"
                        + "{\"job\":\"8.3\",\"user\":\"bob\",\"request\":\"nic=1[numa_node=1]\",\"slots\":1,\"grants\":"
                        + "{\"node01\":{\"nic\":[\"ib1\"]}},\"env\":{\"SGE_HGR_nic\":\"ib1\"}},"
                        + "{\"job\":\"10\",\"user\":\"dave\",\"request\":\"nic=1\",\"slots\":1,\"grants\":"
                        + "{\"node01\":{\"nic\":[\"ib0\"]}},\"env\":{\"SGE_HGR_nic\":\"ib0\"}}]");
                // The process job 7's starter entered is remembered (reconciliation watches it).
                assertThat(d.jobs().get("7").pids()).containsOnlyKeys(20819L);
            }
            List<String> compacted = Files.readAllLines(config.stateDir().resolve("journal"));
            assertThat(compacted).hasSize(4); // the configuration and the three held grants
        }
    }
}
