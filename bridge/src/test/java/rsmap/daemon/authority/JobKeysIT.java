// docs/cluster.md, "One group for the whole job", with a real munged: an authority (a process of its own, so
// that it can be SIGKILLed) and two host daemons on loopback TCP, jobs through execd-stub and the real hooks.
// A job's gpu=2[same=id,scope=job] gets the first host's card on both hosts; a host that cannot grant that
// card reschedules the job naming it and grants nothing; the job's last end forgets the card; a SIGKILL of
// the authority between the two starts loses nothing. The same for a global map's licence servers: every
// host's global part of one job is held to the server its first part chose.
package rsmap.daemon.authority;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.daemon.AuthorityCell.finish;
import static rsmap.wire.Polls.until;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import rsmap.daemon.AuthorityCell;
import rsmap.daemon.ExecdCell;
import rsmap.wire.Polls;

@Timeout(240)
class JobKeysIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SPANS_JOB = "gpu=2[same=id,scope=job]";
    private static final String AUTHORITY = "authority";
    @RegisterExtension
    static final AuthorityCell cell = new AuthorityCell("rsmap-job-keys");
    final List<Path> gates = new ArrayList<>();

    /**
     * node01 has cards 0 and 1 with two shares each and alone takes card 0 for two shares (best fit, first
     * in order); node02 has three shares of card 0 and two of card 1, and alone takes card 1 (the smaller
     * group that is large enough). The authority's licences are {@link GlobalKeysTest.LICENCES}.
     */
    @BeforeEach
    void setUp() throws Exception {
        cell.startAuthority(AUTHORITY, GlobalKeysTest.LICENCES);
        cell.startHost("node01", "gpu=4(0 0 1 1)");
        cell.startHost("node02", "gpu=5(0 0 0 1 1)");
    }

    /** Jobs still waiting end, before the cell closes the hosts. */
    @AfterEach
    void openGates() throws Exception {
        for (Path g : gates) {
            Files.writeString(g, "");
        }
    }

    /** A job through execd-stub and the hooks on {@code host}, printing its cards; {@code gate}: it waits for that file. */
    private Process job(String host, String id, String request, Path gate) throws Exception {
        String script = "echo \"gpu=$SGE_HGR_gpu lic=$SGE_HGR_lic\"" + (gate == null ? "" : "; " + ExecdCell.waitFor(gate));
        return cell.job(host, id, request, script);
    }

    /** A job that holds its grant until {@link #open} of the gate it returns; started once it holds. */
    private Path held(String host, String id, String request) throws Exception {
        Path gate = cell.shared().resolve("go-" + host + "-" + id);
        gates.add(gate);
        job(host, id, request, gate);
        until("job " + id + " holds on " + host, () -> cell.host(host).jobs().containsKey(id));
        return gate;
    }

    private void open(Path gate, String host, String id) throws Exception {
        Files.writeString(gate, "");
        until("job " + id + " ended on " + host, () -> !cell.host(host).jobs().containsKey(id));
    }

    /** Until the authority holds no job's keys: a host's JOB_END is forwarded to it, retried within 500 ms. */
    private void forgotten() throws Exception {
        until("every job's keys forgotten after its last JOB_END", () -> {
            try {
                return jobKeys().size() == 0;
            } catch (Exception e) {
                return false;
            }
        });
    }

    private String cards(String host, String id) {
        return cell.host(host).jobs().get(id).env().get("SGE_HGR_gpu");
    }

    private String licences(String host, String id) {
        return cell.host(host).jobs().get(id).env().get("SGE_HGR_lic");
    }

    /** The jobs the authority holds global grants of, HOST:JOB. */
    private List<String> authorityJobs() throws Exception {
        List<String> out = new ArrayList<>();
        cell.query(AUTHORITY, false).path("jobs").forEach(j -> out.add(j.path("job").asText()));
        return out;
    }

    /** The authority's record of the jobs' groups: {JOB: {"keys", "hosts"}}. */
    private JsonNode jobKeys() throws Exception {
        return cell.query(AUTHORITY, true).path("job_keys");
    }

    @Test
    void oneJobOnTwoHosts_getsTheFirstHostsCardOnBoth_andItsLastEndForgetsIt() throws Exception {
        assertThat(finish(job("node02", "8", "gpu=2[same=id]", null))).as("scope=host: node02's own choice")
                .contains("gpu=1 1").endsWith("exit=0");
        Path gate = held("node01", "7", SPANS_JOB);
        assertThat(cards("node01", "7")).isEqualTo("0 0");
        assertThat(jobKeys().path("7").toString()).isEqualTo("{\"keys\":{\"gpu\":\"0\"},\"hosts\":[\"node01\"]}");
        Path second = held("node02", "7", SPANS_JOB);
        assertThat(cards("node02", "7")).as("held to the job's card, not its own choice").isEqualTo("0 0");
        assertThat(AuthorityIT.rsmap("status", "--cluster", "--socket", cell.socket(AUTHORITY).toString()))
                .contains("job 7 held to scope=job groups gpu=0 on node01 node02").endsWith("exit=0");
        open(second, "node02", "7");
        assertThat(jobKeys().path("7").path("hosts").toString()).as("node02's part ended").isEqualTo("[\"node01\"]");
        open(gate, "node01", "7");
        assertThat(jobKeys().has("7")).as("the job's last end forgets its card").isFalse();
        // A job of that number again, first on node02: its own choice is the job's now.
        assertThat(finish(job("node02", "7", SPANS_JOB, null))).contains("gpu=1 1").endsWith("exit=0");
        forgotten(); // the hosts' JOB_ENDs reach the authority through their links
    }

    @Test
    void aHostThatCannotGrantTheJobsCard_reschedulesItNamingTheCard_andGrantsNothing() throws Exception {
        Path other = held("node02", "20", "gpu=2[id=0]"); // two of node02's three shares of card 0
        Path gate = held("node01", "21", SPANS_JOB);
        assertThat(cards("node01", "21")).isEqualTo("0 0");
        assertThat(finish(job("node02", "21", SPANS_JOB, null))).as("rescheduled, naming the job's card")
                .contains("prolog asked to reschedule")
                .contains("the job's group id=0 (chosen once for the whole job) has 1 free matching instance here, needs 2")
                .doesNotContain("gpu=").endsWith("exit=99");
        assertThat(cell.host("node02").jobs().keySet()).as("nothing granted").containsExactly("20");
        assertThat(jobKeys().path("21").path("hosts").toString()).as("node02 holds no part of it")
                .isEqualTo("[\"node01\"]");
        open(other, "node02", "20");
        assertThat(finish(job("node02", "21", SPANS_JOB, null))).as("rescheduled when card 0 is free again")
                .contains("gpu=0 0").endsWith("exit=0");
        open(gate, "node01", "21");
        forgotten(); // the hosts' JOB_ENDs reach the authority through their links
    }

    @Test
    void theAuthoritySigkilledBetweenTheTwoStarts_stillAnswersTheJobsCard() throws Exception {
        Path gate = held("node01", "30", SPANS_JOB);
        assertThat(cards("node01", "30")).isEqualTo("0 0");
        // SIGKILL: the key record was forced before node01 was answered
        cell.authority(AUTHORITY).destroyForcibly().waitFor();
        cell.startAuthority(AUTHORITY);
        // node01 notices at its next event and reconnects: its reconciliation lists job 30 as holding a card.
        assertThat(finish(job("node01", "31", "gpu=1", null))).endsWith("exit=0");
        until("node01 registered again", () -> {
            try {
                return jobKeys().path("30").path("hosts").toString().equals("[\"node01\"]");
            } catch (Exception e) {
                return false;
            }
        });
        String second = "";
        for (int attempt = 0; attempt < 20; attempt++) { // node02's link notices the restart at its first call
            second = finish(job("node02", "30", SPANS_JOB, null));
            if (!second.contains("unreachable")) {
                break;
            }
        }
        assertThat(second).contains("gpu=0 0").endsWith("exit=0");
        open(gate, "node01", "30");
        forgotten(); // the hosts' JOB_ENDs reach the authority through their links
    }

    @Test
    void aGlobalMap_oneJobOnTwoHosts_getsTheFirstHostsServerOnBoth_andAServerThatCannotServeReschedules()
            throws Exception {
        String licence = "lic=1[same=id,scope=job]";
        Path gate = held("node01", "70", licence);
        assertThat(licences("node01", "70")).as("alone: lb, the smaller server large enough").isEqualTo("lb");
        Path other = held("node01", "69", "lic=3[id=la]"); // la one free, lb two: alone, node02 would take la
        Path second = held("node02", "70", licence);
        assertThat(licences("node02", "70")).as("held to the job's server, not its own choice").isEqualTo("lb");
        assertThat(jobKeys().path("70").toString()).isEqualTo("{\"keys\":{\"lic\":\"lb\"},\"hosts\":[\"node01\",\"node02\"]}");
        open(other, "node01", "69"); // la four free, lb one
        Path three = held("node01", "71", licence);
        assertThat(licences("node01", "71")).as("lb's last").isEqualTo("lb");
        assertThat(finish(job("node02", "71", licence, null))).as("rescheduled, naming the server, where la is free")
                .contains("prolog asked to reschedule")
                .contains("the job's group id=lb (chosen once for the whole job) has 0 free matching instances here, needs 1")
                .doesNotContain("lic=").endsWith("exit=99");
        assertThat(cell.host("node02").jobs().keySet()).as("nothing granted on node02").containsExactly("70");
        assertThat(authorityJobs()).as("nor by the authority").containsExactlyInAnyOrder("node01:70", "node02:70",
                "node01:71");
        assertThat(jobKeys().path("71").path("hosts").toString()).isEqualTo("[\"node01\"]");
        open(three, "node01", "71");
        open(second, "node02", "70");
        assertThat(jobKeys().path("70").path("hosts").toString()).as("node02's part ended").isEqualTo("[\"node01\"]");
        open(gate, "node01", "70");
        assertThat(jobKeys().has("70")).as("the job's last end forgets its server").isFalse();
        forgotten();
        assertThat(authorityJobs()).isEmpty();
    }

    @Test
    void aHostAndAGlobalMap_eachKeepItsKey_overASigkillOfTheAuthorityBetweenTheTwoStarts() throws Exception {
        String both = SPANS_JOB + ",lic=1[same=id,scope=job]";
        Path gate = held("node01", "80", both);
        assertThat(cards("node01", "80") + " " + licences("node01", "80")).isEqualTo("0 0 lb");
        Path other = held("node02", "79", "lic=3[id=la]"); // la one free, lb two: alone, node02 would take la
        // SIGKILL: both keys were forced before node01 was answered
        cell.authority(AUTHORITY).destroyForcibly().waitFor();
        cell.startAuthority(AUTHORITY);
        assertThat(finish(job("node01", "81", "gpu=1", null))).endsWith("exit=0"); // node01 reconnects (its events)
        until("node01 registered again", () -> {
            try {
                return jobKeys().path("80").toString()
                        .equals("{\"keys\":{\"gpu\":\"0\",\"lic\":\"lb\"},\"hosts\":[\"node01\"]}");
            } catch (Exception e) {
                return false;
            }
        });
        // node02's link may have seen the kill already: then it waits out its backoff (250 ms doubling).
        String second = Polls.retry(Duration.ofSeconds(60), () -> finish(job("node02", "80", both, null)),
                s -> !s.contains("unreachable"));
        assertThat(second).as("one key per map, both kept").contains("gpu=0 0 lic=lb").endsWith("exit=0");
        open(other, "node02", "79");
        open(gate, "node01", "80");
        forgotten();
    }
}
