// the authority in one JVM: an authority and two host daemons, each with its own socket and state directory,
// the hosts reaching the authority through its local socket (the TCP and MUNGE path: AuthorityIT).
package rsmap.daemon.authority;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.Daemon;
import rsmap.daemon.DaemonSessions;
import rsmap.daemon.TestDaemon;
import rsmap.daemon.Trees;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.HostAuth;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Polls;
import rsmap.wire.Ports;
import rsmap.wire.Session;

@Timeout(60)
public class AuthorityTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path tmp;
    public Config authorityConfig;
    Daemon authority;
    final List<Daemon> hosts = new ArrayList<>();
    final List<Config> hostConfigs = new ArrayList<>();

    /** Logins by a plain token, in one JVM: the MUNGE path is AuthorityIT's, with a real munged. */
    public static final HostAuth TOKENS = new HostAuth() {
        @Override
        public java.util.function.Supplier<String> credential(Config host) {
            return () -> "token:" + host.host();
        }

        @Override
        public rsmap.wire.Authenticator authenticator(Config authority) {
            return credential -> {
                if (!credential.startsWith("token:")) {
                    throw new rsmap.wire.Authenticator.Refused("not a token");
                }
                return new Session.Peer("root", "root", 0, 0, 0);
            };
        }
    };
    int port;

    @BeforeEach
    void start() throws Exception {
        port = Ports.free();
        authorityConfig = authorityConfig(tmp.resolve("authority"), port, "lic=1(la)");
        authority = TestDaemon.start(authorityConfig, TOKENS);
        for (String h : List.of("node01", "node02")) {
            Config c = hostConfig(h);
            hostConfigs.add(c);
            hosts.add(TestDaemon.start(c, TOKENS));
        }
    }


    @AfterEach
    void stop() throws Exception {
        for (Daemon d : hosts) {
            d.close();
        }
        if (authority != null) {
            authority.close();
        }
    }

    /**
     * An authority's configuration: no host, no complex_values (refused there), the global maps {@code global}
     * (null: none); a setting of {@code more} replaces its default (a state_dir that two authorities share).
     */
    public static Config authorityConfig(Path dir, int port, String global, String... more) throws Exception {
        java.nio.file.Files.createDirectories(dir);
        java.nio.file.Files.copy(Path.of("..", "examples", "complexes"), dir.resolve("complexes"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        List<String> defaults = new ArrayList<>(List.of("complexes = complexes", "role = authority",
                "listen = 127.0.0.1:" + port, "global_complex_values = " + global, "socket = rsmapd.sock",
                "state_dir = state", "admin_user = " + System.getProperty("user.name"), "reconcile_interval = 0"));
        if (global == null) {
            defaults.remove(3);
        }
        List<String> lines = TestDaemon.settings(defaults, more);
        Path conf = java.nio.file.Files.writeString(dir.resolve("rsmapd.conf"), String.join("\n", lines) + "\n");
        return Config.parse(java.nio.file.Files.readString(conf), conf, "node00");
    }

    private Config hostConfig(String host) throws Exception {
        return TestDaemon.config(tmp.resolve(host), "gpu=2(0 1)", "host = " + host, "authority = 127.0.0.1:" + port,
                "reconcile_interval = 0");
    }

    /** The authority's cluster view (QUERY {"cluster":true}). */
    private JsonNode clusterView() throws Exception {
        return JSON.readTree(call(authority, Code.QUERY, "{\"cluster\":true}").get(0).text(0));
    }

    /** The holders of {@code host}'s gpu instances in the cluster view, comma-separated ("" free). */
    private static String holders(JsonNode view, String host) {
        List<String> out = new ArrayList<>();
        view.path("hosts").path(host).path("maps").path("gpu").path("instances").forEach(i -> out.add(i.path("holder")
                .asText()));
        return String.join(",", out);
    }

    private JsonNode job7() throws Exception {
        return JSON.readTree(call(hosts.get(0), Code.QUERY, "{\"job\":\"7\"}").get(0).text(0)).path("jobs").path(0);
    }

    private static List<Frame> call(Daemon d, Code code, String json) {
        Session s = DaemonSessions.as(d, "root", 0, 0, new ArrayList<>());
        return s.onCommand(json == null ? Frame.of(2, code.value()) : Frame.of(2, code.value(), json));
    }

    private static List<Frame> start(Daemon d, String job, String request) {
        return call(d, Code.JOB_START, "{\"job\":\"" + job + "\",\"user\":\"alice\",\"request\":\"" + request + "\"}");
    }

    @Test
    void aPoolOfOneSeat_isGrantedOnce_acrossTwoHosts_andTheSecondJobStartsAfterTheFirstEnds() throws Exception {
        List<Frame> a = start(hosts.get(0), "7", "gpu=1,lic=1");
        assertThat(a.get(a.size() - 1)).as(a.toString()).isEqualTo(Session.ok(2));
        assertThat(a.get(0).args().subList(1, 3).stream().map(x -> new String(x, java.nio.charset.StandardCharsets.UTF_8))
                .toList()).containsExactly("SGE_HGR_gpu=0", "SGE_HGR_lic=la");
        List<Frame> b = start(hosts.get(1), "8", "lic=1");
        assertThat(b.get(0).code()).isEqualTo(Code.ERROR.value());
        assertThat(b.get(0).text(0)).startsWith("authority 127.0.0.1:" + port + ": ").contains("lic");
        assertThat(b.get(0).text(1)).as("the authority's category, carried through by the host").isEqualTo("busy");
        assertThat(hosts.get(1).cluster().runningJobs()).isEmpty();
        call(hosts.get(0), Code.JOB_END, "{\"job\":\"7\"}");
        List<Frame> again = start(hosts.get(1), "8", "lic=1");
        assertThat(again.get(0).text(1)).isEqualTo("SGE_HGR_lic=la");
        JsonNode q = JSON.readTree(call(authority, Code.QUERY, "{}").get(0).text(0));
        assertThat(q.path("maps").path("lic").path("instances").toString())
                .isEqualTo("[{\"id\":\"la\",\"holder\":\"node02:8\",\"health\":\"ok\"}]");
    }

    @Test
    void aJobWhoseLocalPartFails_givesItsGlobalGrantBack() throws Exception {
        start(hosts.get(0), "7", "gpu=2");
        List<Frame> b = start(hosts.get(0), "8", "gpu=1,lic=1");
        assertThat(b.get(0).code()).isEqualTo(Code.ERROR.value());
        JsonNode q = JSON.readTree(call(authority, Code.QUERY, "{}").get(0).text(0));
        assertThat(q.path("jobs").size()).as("no half grant left at the authority").isZero();
        assertThat(start(hosts.get(1), "9", "lic=1").get(0).text(1)).isEqualTo("SGE_HGR_lic=la");
    }

    @Test
    void theAuthorityDown_aJobWithoutGlobalMapsStarts_oneWithIsRefusedNamingIt() throws Exception {
        authority.close();
        authority = null;
        assertThat(start(hosts.get(0), "7", "gpu=1").get(0).text(1)).isEqualTo("SGE_HGR_gpu=0");
        List<Frame> b = start(hosts.get(0), "8", "lic=1");
        assertThat(b.get(0).code()).isEqualTo(Code.ERROR.value());
        assertThat(b.get(0).text(0)).startsWith("authority 127.0.0.1:" + port + " unreachable: ");
        assertThat(b.get(0).text(1)).as("docs/protocol.md, \"Error categories\"").isEqualTo("unavailable");
    }

    /**
     * A global part whose JOB_START would be over the frame bound (the cluster's max_frame) is never sent:
     * the job is refused (category refused: asking again would not change it), nothing is held, and the
     * link stays up for the next job (a lost link would refuse it as unreachable during the backoff).
     */
    @Test
    void aGlobalPartOverTheFrameBound_isRefusedUnsent_andTheLinkServesTheNextJob() throws Exception {
        Config small = TestDaemon.config(tmp.resolve("node03"), "gpu=2(0 1)", "host = node03",
                "authority = 127.0.0.1:" + port, "reconcile_interval = 0", "max_frame = 4096");
        Daemon host = TestDaemon.start(small, TOKENS);
        hosts.add(host);
        List<Frame> r = start(host, "7", "gpu=1,lic=1[model=" + "A".repeat(4090) + "]");
        assertThat(r).as(r.toString()).hasSize(1);
        assertThat(r.get(0).code()).isEqualTo(Code.ERROR.value());
        assertThat(r.get(0).text(0)).startsWith("authority 127.0.0.1:" + port + ": the argument of JOB_START (")
                .endsWith("is over the protocol's 4096 bytes frame bound: not sent");
        assertThat(r.get(0).text(1)).isEqualTo("refused");
        assertThat(host.cluster().runningJobs()).isEmpty();
        assertThat(start(host, "8", "gpu=1,lic=1").get(0).text(1)).as("the link is still up")
                .isEqualTo("SGE_HGR_gpu=0");
    }

    @Test
    void theClusterView_showsEveryRegisteredHost_withItsInstancesAndHolders() throws Exception {
        start(hosts.get(0), "7", "gpu=1,lic=1");
        start(hosts.get(1), "8", "gpu=2");
        Polls.until("the hosts' grants reach the cluster view (their events travel on their links' threads)",
                () -> holders(clusterView(), "node01").equals("7,") && holders(clusterView(), "node02").equals("8,8"));
        JsonNode q = clusterView();
        assertThat(q.path("hosts").path("node01").path("maps").path("gpu").path("instances").toString())
                .isEqualTo("[{\"id\":\"0\",\"holder\":\"7\",\"health\":\"ok\"},{\"id\":\"1\",\"holder\":\"\",\"health\":\"ok\"}]");
        assertThat(q.path("hosts").path("node02").path("maps").path("gpu").path("instances").toString())
                .isEqualTo("[{\"id\":\"0\",\"holder\":\"8\",\"health\":\"ok\"},{\"id\":\"1\",\"holder\":\"8\",\"health\":\"ok\"}]");
        assertThat(q.path("maps").path("lic").path("instances").toString())
                .isEqualTo("[{\"id\":\"la\",\"holder\":\"node01:7\",\"health\":\"ok\"}]");
        // MODEL_DEF there describes the cluster: the global host's model, then every registered host's.
        List<String> model = call(authority, Code.MODEL_DEF, null).stream()
                .filter(f -> f.code() == Code.ELEMENT_DEF.value()).map(f -> f.text(0)).toList();
        assertThat(model).contains("{\"element\":\"cluster-host\",\"name\":\"node02\",\"connected\":true}",
                "{\"element\":\"cluster-map\",\"host\":\"node01\",\"name\":\"gpu\",\"amount\":2}",
                "{\"element\":\"cluster-instance\",\"host\":\"node01\",\"map\":\"gpu\",\"index\":1,"
                        + "\"values\":{\"id\":\"1\",\"holder\":\"\",\"health\":\"ok\"}}");
    }

    /** REGISTER is the host's QUERY answer, so its attributes and slots reach the cluster view. */
    @Test
    void register_carriesTheHostsAttributesAndSlots_intoTheClusterView_andTheAuthorityChecksFiltersWithThem()
            throws Exception {
        Daemon node03 = TestDaemon.start(TestDaemon.config(tmp.resolve("node03"), "gpu=2(0 1)", "host = node03",
                "authority = 127.0.0.1:" + port, "reconcile_interval = 0", "slots = 32",
                "attributes = arch=aarch64, cpu_speed=2.4GHz, kernel=6.8.0"), TOKENS);
        hosts.add(node03);
        assertThat(start(node03, "7", "lic=1").get(0).text(1)).isEqualTo("SGE_HGR_lic=la"); // it connected, registered
        Polls.until("node03 in the cluster view", () -> !clusterView().path("hosts").path("node03").isMissingNode());
        JsonNode h = clusterView().path("hosts").path("node03");
        assertThat(h.path("attributes").toString()).isEqualTo("{\"arch\":\"aarch64\",\"cpu_speed\":\"2.4GHz\","
                + "\"kernel\":\"6.8.0\"}");
        assertThat(h.path("slots").asInt()).isEqualTo(32);
        assertThat(call(authority, Code.MODEL_DEF, null).stream().filter(f -> f.code() == Code.ELEMENT_DEF.value())
                .map(f -> f.text(0)).toList()).contains("{\"element\":\"cluster-host\",\"name\":\"node03\","
                + "\"connected\":true,\"slots\":32,\"attributes\":{\"arch\":\"aarch64\",\"cpu_speed\":\"2.4GHz\","
                + "\"kernel\":\"6.8.0\"}}");
        // The authority's JOB_START checks a filter against the requesting host as it registered ...
        List<Frame> refused = call(authority, Code.JOB_START, "{\"host\":\"node03\",\"job\":\"8\",\"request\":"
                + "\"lic=1\",\"filter\":\"!(arch in [\\\"aarch64\\\", \\\"ppc64le\\\"])\"}");
        assertThat(refused.get(0).text(0)).isEqualTo("filter: job filter fails on node03: arch=aarch64 satisfies arch in "
                + "[\"aarch64\", \"ppc64le\"], which the filter negates");
        // ... and skips it for a host it knows no attributes of (that host checks its own).
        List<Frame> unknown = call(authority, Code.JOB_START, "{\"host\":\"node09\",\"job\":\"8\",\"request\":"
                + "\"gpu=1\",\"filter\":\"arch == \\\"x86_64\\\"\"}");
        assertThat(unknown.get(unknown.size() - 1).text(0)).doesNotStartWith("filter:");
    }

    @Test
    void reconnecting_freesTheGlobalGrantsOfJobsTheHostNoLongerHolds() throws Exception {
        start(hosts.get(0), "7", "lic=1");
        // The host forgets job 7 while the authority is away (its epilog ran then).
        authority.close();
        call(hosts.get(0), Code.JOB_END, "{\"job\":\"7\"}");
        authority = TestDaemon.start(authorityConfig, TOKENS);
        JsonNode held = JSON.readTree(call(authority, Code.QUERY, "{}").get(0).text(0));
        assertThat(held.path("jobs").size()).as("journaled at the authority").isEqualTo(1);
        // The next job that needs the authority reconnects, reconciles, then is granted.
        List<Frame> b = start(hosts.get(1), "8", "lic=1");
        assertThat(b.get(0).text(0)).as("node02 never held 7: node01 must reconcile first").startsWith("authority");
        Polls.until("node01's link reconnects in the background and reconciles: the authority frees node01:7",
                () -> JSON.readTree(call(authority, Code.QUERY, "{}").get(0).text(0)).path("jobs").size() == 0);
        List<List<Frame>> last = new ArrayList<>();
        Polls.until("node02 (reconnecting with backoff) is granted la", () -> {
            last.add(0, start(hosts.get(1), "9", "lic=1"));
            return last.get(0).get(0).code() != Code.ERROR.value();
        });
        assertThat(last.get(0).get(0).text(1)).as(last.get(0).toString()).isEqualTo("SGE_HGR_lic=la");
    }

    /**
     * docs/cluster.md, "a job ends while the authority is away": the seat a host's epilog gave back while
     * its link was in a long reconnect backoff reaches the restarted authority within the stated bound
     * (AuthorityLink.GIVE_BACK_RETRY_MS and one connect), so that another host's job that needs it starts
     * then, not after the backoff (it was rescheduled, exit 99, meanwhile).
     */
    @Test
    void aSeatGivenBackDuringTheLinksBackoff_isFreeAtTheAuthoritySoonAfterItIsBack() throws Exception {
        for (Daemon h : hosts) { // both links up first: node02's own backoff is not what this is about
            Polls.until("the link is up", () -> JSON.readTree(call(h, Code.QUERY, null).get(0).text(0))
                    .path("authority").path("connected").asBoolean());
        }
        start(hosts.get(0), "7", "gpu=1,lic=1");
        authority.close();
        // node01 notices (the HOST_EVENT of a local job fails) and backs off: 250 ms doubling, each connect refused.
        start(hosts.get(0), "probe", "gpu=1");
        call(hosts.get(0), Code.JOB_END, "{\"job\":\"probe\"}");
        Thread.sleep(4500); // the thing tested: its backoff is now several seconds long
        call(hosts.get(0), Code.JOB_END, "{\"job\":\"7\"}"); // the epilog: the authority cannot be told now
        authority = TestDaemon.start(authorityConfig, TOKENS);
        // until then node02's prolog would exit 99 (rescheduled) each time
        List<Frame> b = Polls.retry(Duration.ofMillis(2500), () -> start(hosts.get(1), "8", "lic=1"),
                a -> a.get(0).code() != Code.ERROR.value());
        assertThat(b.get(0).code()).as("within 2.5 s of the authority's restart: " + b).isEqualTo(Code.STATE.value());
        assertThat(b.get(0).text(1)).isEqualTo("SGE_HGR_lic=la");
    }

    @Test
    void place_evaluatesAFilter_andChoosesHostsAndAnAlternative_fromWhatTheHostsTold() throws Exception {
        start(hosts.get(0), "7", "gpu=1,lic=1");
        Polls.until("node01's grant reaches the cluster view (it travels on its link's thread)",
                () -> holders(clusterView(), "node01").equals("7,"));
        JsonNode f = JSON.readTree(call(authority, Code.PLACE, "{\"filter\":\"host != \\\"node01\\\"\"}").get(0).text(0));
        assertThat(f.path("pass").toString()).isEqualTo("[\"node02\"]");
        assertThat(f.path("fail").get(0).path("host").asText()).isEqualTo("node01");
        assertThat(f.path("fail").get(0).path("attribute").asText()).isEqualTo("host");
        JsonNode two = JSON.readTree(call(authority, Code.PLACE, "{\"request\":\"gpu=2\",\"slots\":1}").get(0).text(0));
        assertThat(two.path("decision").asText()).as(two.toString()).isEqualTo("start");
        assertThat(two.path("hosts").toString()).as("node01 has one card free").isEqualTo("{\"node02\":1}");
        JsonNode alt = JSON.readTree(call(authority, Code.PLACE, "{\"alternatives\":[{\"request\":\"gpu=3\",\"slots\":1},"
                + "{\"request\":\"gpu=1\",\"slots\":1}]}").get(0).text(0));
        assertThat(alt.path("alternative").asInt()).as(alt.toString()).isEqualTo(1);
        assertThat(alt.path("hosts").toString()).isEqualTo("{\"node01\":1}");
        JsonNode seat = JSON.readTree(call(authority, Code.PLACE, "{\"request\":\"lic=1\",\"slots\":1}").get(0).text(0));
        assertThat(seat.path("decision").asText()).as("the one seat is held by node01:7: " + seat).isEqualTo("none");
        List<Frame> bad = call(authority, Code.PLACE, "{\"filter\":\"cpus >\"}");
        assertThat(bad.get(0).code()).isEqualTo(Code.ERROR.value());
        assertThat(bad.get(0).text(0)).startsWith("filter: column");
        List<Frame> onHost = call(hosts.get(0), Code.PLACE, "{\"filter\":\"cpus > 1\"}");
        assertThat(onHost.get(0).text(0)).startsWith("PLACE is the authority's");
        assertThat(onHost.get(0).text(1)).as("a client set up with a host's socket: not the job's fault")
                .isEqualTo("unavailable");
    }

    @Test
    void aReallocOfAGlobalMap_isDenied_namingTheAuthority() throws Exception {
        start(hosts.get(0), "7", "gpu=1,lic=1");
        List<Frame> r = call(hosts.get(0), Code.REALLOC, "{\"job\":\"7\",\"add\":\"lic=1\"}");
        assertThat(r.get(0).code()).as(r.toString()).isEqualTo(Code.ALLOC.value());
        assertThat(r.get(0).text(1)).as("DENY").isEqualTo("1");
        assertThat(r.get(0).text(2)).contains("global maps (lic=1) are granted by the authority 127.0.0.1:" + port);
        List<Frame> local = call(hosts.get(0), Code.REALLOC, "{\"job\":\"7\",\"add\":\"gpu=1\"}");
        assertThat(local.get(0).text(1)).as("a local grow still works").isEqualTo("0");
    }

    @Test
    void aGlobalGrantTheAuthorityDoesNotKnow_isReportedAsUnconfirmed_andHeldForItUntilItEnds() throws Exception {
        start(hosts.get(0), "7", "lic=1");
        JsonNode before = JSON.readTree(call(hosts.get(0), Code.QUERY, null).get(0).text(0)).path("authority");
        assertThat(before.path("connected").asBoolean()).as(before.toString()).isTrue();
        // The authority loses its state (a careless admin wipes state_dir): it no longer knows node01:7.
        authority.close();
        Trees.delete(authorityConfig.stateDir());
        JsonNode down = JSON.readTree(call(hosts.get(0), Code.QUERY, null).get(0).text(0)).path("authority");
        authority = TestDaemon.start(authorityConfig, TOKENS);
        int[] probes = {0};
        Polls.until("node01 reconnects and reports job 7 unconfirmed", () -> {
            JsonNode a = JSON.readTree(call(hosts.get(0), Code.QUERY, null).get(0).text(0)).path("authority");
            if (a.path("connected").asBoolean() && a.path("unconfirmed").size() > 0) {
                return true;
            }
            String probe = "probe" + probes[0]++;
            call(hosts.get(0), Code.JOB_START, "{\"job\":\"" + probe + "\",\"user\":\"alice\",\"request\":\"gpu=1\"}");
            call(hosts.get(0), Code.JOB_END, "{\"job\":\"" + probe + "\"}");
            return false;
        });
        JsonNode after = JSON.readTree(call(hosts.get(0), Code.QUERY, null).get(0).text(0)).path("authority");
        assertThat(after.path("unconfirmed").toString()).as(after + " (down: " + down + ")").isEqualTo("[\"7\"]");
        assertThat(hosts.get(0).log()).anyMatch(l -> l.contains("job 7 holds global instances")
                && l.contains("does not know"));
        // Never doubled: la is held for node01:7 by its host's word, not granted to another job ...
        JsonNode held = JSON.readTree(call(authority, Code.QUERY, "{}").get(0).text(0));
        assertThat(held.path("maps").path("lic").path("instances").toString())
                .isEqualTo("[{\"id\":\"la\",\"holder\":\"node01:7\",\"health\":\"ok\"}]");
        List<Frame> b = start(hosts.get(1), "8", "lic=1");
        assertThat(b.get(0).code()).as(b.toString()).isEqualTo(Code.ERROR.value());
        // ... until the admin ends job 7: then la is free again.
        call(hosts.get(0), Code.JOB_END, "{\"job\":\"7\"}");
        List<List<Frame>> last = new ArrayList<>();
        Polls.until("node02 (reconnecting with backoff) is granted la", () -> {
            last.add(0, start(hosts.get(1), "8", "lic=1"));
            return last.get(0).get(0).code() != Code.ERROR.value();
        });
        assertThat(last.get(0).get(0).text(1)).as(last.get(0).toString()).isEqualTo("SGE_HGR_lic=la");
    }

    /**
     * The host forces its start record while the authority decides, and records the authority's answer
     * without a force of its own: a host that lost that record (a crash of the machine) learns it again from
     * the authority at its next connect; if the authority holds nothing, the start never completed.
     */
    @Test
    void aHostThatLostTheAuthoritysAnswer_learnsItAtTheNextConnect_orEndsAStartThatNeverCompleted() throws Exception {
        assertThat(start(hosts.get(0), "7", "gpu=1,lic=1").get(0).text(2)).isEqualTo("SGE_HGR_lic=la");
        start(hosts.get(0), "8", "gpu=1");
        hosts.get(0).close();
        Path journal = hostConfigs.get(0).stateDir().resolve("journal");
        dropRemoteRecords(journal); // as if the machine crashed before the lazily written record reached the disk
        hosts.set(0, TestDaemon.start(hostConfigs.get(0), TOKENS));
        Polls.until("node01 learns job 7's global part from the authority", () -> job7().path("env").has("SGE_HGR_lic"));
        JsonNode job = job7();
        assertThat(job.path("env").path("SGE_HGR_lic").asText()).as(job.toString()).isEqualTo("la");
        assertThat(java.nio.file.Files.readString(journal)).contains("\"op\":\"remote\"");
        // Now the authority holds nothing for job 8's (fake) pending global part: the host ends it.
        hosts.get(0).close();
        markPending(journal, "8");
        hosts.set(0, TestDaemon.start(hostConfigs.get(0), TOKENS));
        Polls.until("node01 ends job 8, whose start never completed", () -> !hosts.get(0).jobs().containsKey("8"));
        assertThat(hosts.get(0).jobs()).containsOnlyKeys("7");
        assertThat(hosts.get(0).log()).anyMatch(l -> l.contains("job 8: the authority holds no global part"));
    }

    /** Rewrites a journal without its "remote" records (each line is CRC, length and record). */
    private static void dropRemoteRecords(Path journal) throws Exception {
        List<String> kept = new ArrayList<>();
        try (rsmap.journal.Journal j = rsmap.journal.Journal.open(journal)) {
            for (String r : j.replayed()) {
                if (!r.contains("\"op\":\"remote\"")) {
                    kept.add(r);
                }
            }
            j.compact(kept);
        }
    }

    /** Rewrites job {@code id}'s start record as one whose global part was still being asked for. */
    private static void markPending(Path journal, String id) throws Exception {
        List<String> out = new ArrayList<>();
        try (rsmap.journal.Journal j = rsmap.journal.Journal.open(journal)) {
            for (String r : j.replayed()) {
                out.add(r.contains("\"op\":\"start\"") && r.contains("\"job\":\"" + id + "\"")
                        ? r.replace("\"grant\":", "\"remote\":{\"pending\":{}},\"grant\":") : r);
            }
            j.compact(out);
        }
    }

    @Test
    void configurationMistakes_areRefusedWithOneLine() throws Exception {
        assertRefused("role = authority", "listen = 127.0.0.1:7321", "host = node01");
        assertRefused("role = authority", "listen = 127.0.0.1:7321", "complex_values = gpu=1");
        assertRefused("role = authority");
        assertRefused("authority = node00:7321", "global_complex_values = lic=1(la)");
        assertRefused("authority = node00");
        assertRefused("listen = 0.0.0.0:7321");
        assertRefused("role = boss");
        assertRefused("alternatives_policy = best");
        assertRefused("alternatives_policy = fewest a,b");
        assertThat(TestDaemon.config(tmp.resolve("policy"), "NONE", "alternatives_policy = ranking big, small")
                .alternativesPolicy().ranking()).containsExactly("big", "small");
    }

    private void assertRefused(String... lines) throws Exception {
        Path dir = tmp.resolve("bad" + System.nanoTime());
        try {
            TestDaemon.config(dir, "NONE", lines);
            throw new AssertionError("accepted: " + List.of(lines));
        } catch (rsmap.ParseException e) {
            assertThat(e.getMessage()).doesNotContain("\n");
        }
    }
}
