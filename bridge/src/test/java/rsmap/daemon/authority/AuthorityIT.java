// "Done when", on one machine with a real munged: an authority (bin/rsmapd's Main, a process of its
// own so that it can be SIGKILLed) and two host daemons on loopback TCP, jobs through execd-stub and the real
// hooks on both hosts. A seat is granted once; the second job is rescheduled and starts after the first
// ends; SIGKILL of the authority during 200 starts loses and doubles nothing; without the authority, jobs
// without global maps start; forged, replayed and foreign credentials are refused.
package rsmap.daemon.authority;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.daemon.AuthorityCell.finish;
import static rsmap.wire.Polls.until;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import rsmap.daemon.AuthorityCell;
import rsmap.daemon.ExecdCell;
import rsmap.daemon.SeatJobs;
import rsmap.daemon.records.JournalRecord;
import rsmap.journal.Journal;
import rsmap.munge.MungeAuthenticator;
import rsmap.munge.MungeD;
import rsmap.wire.Client;
import rsmap.wire.Code;

@Timeout(300)
public class AuthorityIT {
    private static final String AUTHORITY = "authority";
    private static final ObjectMapper JSON = new ObjectMapper();
    @RegisterExtension
    static final AuthorityCell cell = new AuthorityCell("rsmap-authority");

    /** `rsmap ARGS` as a process of its own, as an admin runs it. */
    public static String rsmap(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                rsmap.cli.Main.class.getName()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8) + "exit=" + p.exitValue();
    }

    @Test
    void aPoolOfOneSeat_isGrantedOnce_theSecondJobIsRescheduled_andStartsAfterTheFirstEnds() throws Exception {
        cell.startAuthority(AUTHORITY, "lic=1(la)");
        cell.startHost("node01", "gpu=2(0 1)");
        cell.startHost("node02", "gpu=2(0 1)");
        Path go = cell.shared().resolve("go");
        Process first = cell.job("node01", "7", "gpu=1,lic=1", "echo \"first=$SGE_HGR_lic gpu=$SGE_HGR_gpu\"; "
                + ExecdCell.waitFor(go));
        until("job 7 holds its seat", () -> cell.host("node01").jobs().containsKey("7"));
        String second = finish(cell.job("node02", "8", "lic=1", "echo second=$SGE_HGR_lic"));
        assertThat(second).as("rescheduled, naming the map and the authority").contains("prolog asked to reschedule")
                .contains("authority 127.0.0.1:" + cell.port(AUTHORITY)).contains("lic").doesNotContain("second=")
                .endsWith("exit=99");
        String status = rsmap("status", "--cluster", "--socket", cell.socket(AUTHORITY).toString());
        assertThat(status).contains("lic (1 instances)").contains("la           held by job node01:7")
                .contains("host node01").contains("host node02").endsWith("exit=0");
        String sock = cell.socket(AUTHORITY).toString();
        assertThat(rsmap("place", "--socket", sock, "--request", "lic=1", "--json")).as("the one seat is held")
                .contains("\"decision\":\"none\"").endsWith("exit=3");
        assertThat(rsmap("place", "--socket", sock, "--request", "gpu=2")).contains("can start now on node02 (1 slots)")
                .endsWith("exit=0");
        assertThat(rsmap("place", "--socket", sock, "--filter", "host in [\"node02\"]")).contains("1 hosts pass: node02")
                .contains("node01 fails (job)").endsWith("exit=0");
        assertThat(rsmap("place", "--socket", sock, "--filter", "cpus >")).startsWith("error: rsmapd: filter: column")
                .endsWith("exit=2");
        Files.writeString(go, "");
        assertThat(finish(first)).contains("first=la gpu=0").endsWith("exit=0");
        assertThat(finish(cell.job("node02", "8", "lic=1", "echo second=$SGE_HGR_lic"))).contains("second=la")
                .endsWith("exit=0");
        JsonNode cluster = cell.query(AUTHORITY, true);
        assertThat(cluster.path("maps").path("lic").path("instances").toString())
                .isEqualTo("[{\"id\":\"la\",\"holder\":\"\",\"health\":\"ok\"}]");
        until("node01's events reach the authority", () -> {
            try {
                return cell.query(AUTHORITY, true).path("hosts").path("node01").path("jobs").isEmpty();
            } catch (Exception e) {
                return false;
            }
        });
        String json = rsmap("status", "--cluster", "--json", "--socket", cell.socket(AUTHORITY).toString());
        assertThat(JSON.readTree(json.substring(0, json.lastIndexOf("exit="))).path("hosts").path("node02")
                .path("maps").path("gpu").path("amount").asInt()).isEqualTo(2);
    }

    @Test
    void theAuthorityKilledDuring200JobStarts_losesNothing_andDoublesNothing() throws Exception {
        cell.startAuthority(AUTHORITY, "lic=4(la lb lc ld)");
        cell.startHost("node01", "gpu=2(0 1)");
        cell.startHost("node02", "gpu=2(0 1)");
        SeatJobs jobs = SeatJobs.start(cell, 200);
        until("a third of the jobs ran: " + jobs.failures(), () -> jobs.done() >= 60 || !jobs.failures().isEmpty());
        assertThat(jobs.failures()).isEmpty();
        cell.authority(AUTHORITY).destroyForcibly().waitFor(); // SIGKILL
        Path before = Files.copy(cell.dir(AUTHORITY).resolve("state").resolve("journal"),
                cell.shared().resolve("journal-before-kill"));
        Thread.sleep(500); // the thing tested: half a second without an authority while the jobs go on starting
        cell.startAuthority(AUTHORITY);
        jobs.awaitAll();
        // Doubled: two jobs' spans of one seat overlap, or the authority granted a seat it held.
        jobs.assertNoSeatHeldTwice();
        // Lost: once the hosts have reconciled, the authority holds nothing and every seat is free.
        until("every seat free at the authority", () -> {
            try {
                return cell.query(AUTHORITY, false).path("jobs").isEmpty();
            } catch (Exception e) {
                return false;
            }
        });
        assertThat(cell.host("node01").jobs()).isEmpty();
        assertThat(cell.host("node02").jobs()).isEmpty();
        cell.authority(AUTHORITY).destroyForcibly().waitFor();
        assertNoDoubledGrant(before);
        assertNoDoubledGrant(cell.dir(AUTHORITY).resolve("state").resolve("journal"));
        System.out.println("AuthorityIT: 200 jobs, " + jobs.rescheduled() + " reschedules around the SIGKILL");
    }

    /** Replays an authority's journal: no seat is granted while another job holds it. */
    public static void assertNoDoubledGrant(Path journal) throws Exception {
        Path copy = Files.copy(journal, journal.resolveSibling(journal.getFileName() + ".check"));
        Map<String, String> holder = new HashMap<>();
        Map<String, List<String>> held = new HashMap<>();
        try (Journal j = Journal.open(copy)) {
            for (String line : j.replayed()) {
                JournalRecord r = JournalRecord.parse(line);
                if (r instanceof JournalRecord.Started s) {
                    List<String> ids = new ArrayList<>();
                    s.grant().byHost().values().forEach(m -> m.values().forEach(ids::addAll));
                    for (String id : ids) {
                        assertThat(holder.get(id)).as("seat " + id + " granted to " + s.job() + " while held")
                                .isNull();
                        holder.put(id, s.job().toString());
                    }
                    held.put(s.job().toString(), ids);
                } else if (r instanceof JournalRecord.Ended e) {
                    for (String id : held.getOrDefault(e.job().toString(), List.of())) {
                        holder.remove(id);
                    }
                    held.remove(e.job().toString());
                }
            }
        }
        Files.delete(copy);
    }

    @Test
    void theAuthorityStopped_jobsWithoutGlobalMapsStillStart_oneWithIsRescheduledNamingIt() throws Exception {
        cell.startAuthority(AUTHORITY, "lic=1(la)");
        cell.startHost("node01", "gpu=2(0 1)");
        assertThat(finish(cell.job("node01", "5", "lic=1", "echo lic=$SGE_HGR_lic"))).contains("lic=la")
                .endsWith("exit=0");
        cell.authority(AUTHORITY).destroy();
        cell.authority(AUTHORITY).waitFor();
        assertThat(finish(cell.job("node01", "6", "gpu=1", "echo gpu=$SGE_HGR_gpu"))).contains("gpu=0")
                .endsWith("exit=0");
        assertThat(finish(cell.job("node01", "7", "lic=1", "echo lic=$SGE_HGR_lic")))
                .contains("authority 127.0.0.1:" + cell.port(AUTHORITY) + " unreachable").doesNotContain("lic=la")
                .endsWith("exit=99");
        cell.startAuthority(AUTHORITY);
        until("node01 reconnects with backoff and registers", () -> {
            try {
                return cell.query(AUTHORITY, true).path("hosts").path("node01").path("connected").asBoolean();
            } catch (Exception e) {
                return false;
            }
        });
        assertThat(finish(cell.job("node01", "7", "lic=1", "echo lic=$SGE_HGR_lic"))).contains("lic=la")
                .endsWith("exit=0");
    }

    @Test
    void forgedReplayedAndForeignCredentials_areRefused_andChangeNothing() throws Exception {
        cell.startAuthority(AUTHORITY, "lic=1(la)");
        InetSocketAddress at = new InetSocketAddress("127.0.0.1", cell.port(AUTHORITY));
        String good = cell.munged().munge().encode(MungeAuthenticator.PURPOSE.getBytes(StandardCharsets.UTF_8));
        try (Client c = Client.connect(at, () -> good, Duration.ofSeconds(5))) {
            c.call(Code.QUERY, "{}");
        }
        assertThat(refusal(at, good)).isEqualTo("munge credential replayed");
        String fresh = cell.munged().munge().encode(MungeAuthenticator.PURPOSE.getBytes(StandardCharsets.UTF_8));
        int mid = fresh.length() / 2;
        String forged = fresh.substring(0, mid) + (fresh.charAt(mid) == 'A' ? 'B' : 'A') + fresh.substring(mid + 1);
        assertThat(refusal(at, forged)).startsWith("munge credential invalid");
        assertThat(refusal(at, "MUNGE:not-a-credential:")).startsWith("munge credential invalid");
        String user = ExecdCell.jobUser();
        assertThat(refusal(at, cell.munged().encodeAs(user, MungeAuthenticator.PURPOSE)))
                .contains("only root may connect");
        // A host whose munged has another key: its link is refused, its job with a global map rescheduled.
        try (MungeD other = MungeD.start()) {
            cell.startHost("node03", "gpu=1(0)", "munge_socket = " + other.socket());
            assertThat(finish(cell.job("node03", "9", "lic=1", "echo lic=$SGE_HGR_lic")))
                    .contains("munge credential invalid").doesNotContain("lic=la").endsWith("exit=99");
            cell.stopHost("node03");
        }
        JsonNode q = cell.query(AUTHORITY, true);
        assertThat(q.path("jobs").isEmpty()).isTrue();
        assertThat(q.path("hosts").has("node03")).as("never registered").isFalse();
    }

    private static String refusal(InetSocketAddress at, String credential) throws Exception {
        try (Client c = Client.connect(at, () -> credential, Duration.ofSeconds(5))) {
            throw new AssertionError("logged in with " + credential);
        } catch (Client.Refusal e) {
            return e.getMessage();
        }
    }
}
