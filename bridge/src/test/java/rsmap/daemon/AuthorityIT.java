// "Done when", on one machine with a real munged: an authority (bin/rsmapd's Main, a process of its
// own so that it can be SIGKILLed) and two host daemons on loopback TCP, jobs through execd-stub and the real
// hooks on both hosts. A seat is granted once; the second job is rescheduled and starts after the first
// ends; SIGKILL of the authority during 200 starts loses and doubles nothing; without the authority, jobs
// without global maps start; forged, replayed and foreign credentials are refused.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import rsmap.journal.Journal;
import rsmap.munge.MungeAuthenticator;
import rsmap.munge.MungeD;
import rsmap.wire.Client;
import rsmap.wire.Code;
import rsmap.wire.Ports;

@Timeout(300)
class AuthorityIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    static MungeD munged;
    Path shared;
    Path hook;
    Path starter;
    int port;
    Path authorityDir;
    Process authority;
    final Map<String, Daemon> hosts = new HashMap<>();
    final Map<String, Config> configs = new HashMap<>();

    @BeforeAll
    static void munged() throws Exception {
        munged = MungeD.start();
    }

    @AfterAll
    static void stopMunged() {
        if (munged != null) {
            munged.close();
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        ExecdStubIT.jobUser(); // root, as sge_execd: the hooks and the daemons' trust need it
        shared = Files.createTempDirectory("rsmap-authority", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        hook = Files.copy(ExecdStubIT.HOOK, shared.resolve("rsmap-hook"));
        starter = Files.createSymbolicLink(shared.resolve("rsmap-starter"), Path.of("rsmap-hook"));
        port = Ports.free();
        authorityDir = shared.resolve("authority");
    }

    @AfterEach
    void tearDown() throws Exception {
        for (Daemon d : hosts.values()) {
            d.close();
        }
        if (authority != null) {
            authority.destroyForcibly().waitFor();
        }
        try (Stream<Path> all = Files.walk(shared)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** The authority of {@code global}, as a process; restarted on the same state after a kill. */
    private void startAuthority(String global) throws Exception {
        Path conf = authorityDir.resolve("rsmapd.conf");
        if (!Files.exists(conf)) {
            AuthorityTest.authorityConfig(authorityDir, port, global, "munge_socket = " + munged.socket());
        }
        authority = RsmapdProcess.start(conf, authorityDir.resolve("rsmapd.sock"), authorityDir.resolve("log"));
    }

    private Daemon startHost(String host, String values, String... more) throws Exception {
        List<String> lines = new ArrayList<>(List.of("host = " + host, "authority = 127.0.0.1:" + port,
                "munge_socket = " + munged.socket(), "socket_mode = 0666", "reconcile_interval = 0"));
        lines.addAll(List.of(more));
        Config c = TestDaemon.config(shared.resolve(host), values, lines.toArray(new String[0]));
        Daemon d = TestDaemon.start(c);
        hosts.put(host, d);
        configs.put(host, c);
        return d;
    }

    /** A job through execd-stub and the hooks on {@code host}; the job is {@code sh -c script}. */
    private Process job(String host, String id, String request, String script) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(ExecdStubIT.STUB.toString(), "--spool",
                shared.resolve(host).resolve("spool").toString(), "--host", host, "--job", id, "--cwd", "/",
                "--tmpdir", shared.toString(), "--prolog", "root@" + hook + " prolog", "--starter",
                starter.toString(), "--epilog", "root@" + hook + " epilog", "--", "sh", "-c", script));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("RSMAP_SOCKET", configs.get(host).socket().toString());
        pb.environment().put("RSMAP_REQUEST", request);
        return pb.start();
    }

    private static String finish(Process p) throws Exception {
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the job ends").isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8) + "exit=" + p.exitValue();
    }

    private static void until(String what, BooleanSupplier done) throws Exception {
        for (int i = 0; i < 600 && !done.getAsBoolean(); i++) {
            Thread.sleep(50);
        }
        assertThat(done.getAsBoolean()).as(what).isTrue();
    }

    private JsonNode authorityQuery(boolean cluster) throws Exception {
        try (Client c = Client.connect(authorityDir.resolve("rsmapd.sock"))) {
            return JSON.readTree(c.call(Code.QUERY, cluster ? "{\"cluster\":true}" : "{}").get(0).text(0));
        }
    }

    /** `rsmap ARGS` as a process of its own, as an admin runs it. */
    static String rsmap(String... args) throws Exception {
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
        startAuthority("lic=1(la)");
        startHost("node01", "gpu=2(0 1)");
        startHost("node02", "gpu=2(0 1)");
        Path go = shared.resolve("go");
        Process first = job("node01", "7", "gpu=1,lic=1", "echo \"first=$SGE_HGR_lic gpu=$SGE_HGR_gpu\"; "
                + ExecdStubIT.waitFor(go));
        until("job 7 holds its seat", () -> hosts.get("node01").jobs().containsKey("7"));
        String second = finish(job("node02", "8", "lic=1", "echo second=$SGE_HGR_lic"));
        assertThat(second).as("rescheduled, naming the map and the authority").contains("prolog asked to reschedule")
                .contains("authority 127.0.0.1:" + port).contains("lic").doesNotContain("second=").endsWith("exit=99");
        String status = rsmap("status", "--cluster", "--socket", authorityDir.resolve("rsmapd.sock").toString());
        assertThat(status).contains("lic (1 instances)").contains("la           held by job node01:7")
                .contains("host node01").contains("host node02").endsWith("exit=0");
        String sock = authorityDir.resolve("rsmapd.sock").toString();
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
        assertThat(finish(job("node02", "8", "lic=1", "echo second=$SGE_HGR_lic"))).contains("second=la")
                .endsWith("exit=0");
        JsonNode cluster = authorityQuery(true);
        assertThat(cluster.path("maps").path("lic").path("instances").toString())
                .isEqualTo("[{\"id\":\"la\",\"holder\":\"\",\"health\":\"ok\"}]");
        until("node01's events reach the authority", () -> {
            try {
                return authorityQuery(true).path("hosts").path("node01").path("jobs").isEmpty();
            } catch (Exception e) {
                return false;
            }
        });
        String json = rsmap("status", "--cluster", "--json", "--socket", authorityDir.resolve("rsmapd.sock").toString());
        assertThat(JSON.readTree(json.substring(0, json.lastIndexOf("exit="))).path("hosts").path("node02")
                .path("maps").path("gpu").path("amount").asInt()).isEqualTo(2);
    }

    @Test
    void theAuthorityKilledDuring200JobStarts_losesNothing_andDoublesNothing() throws Exception {
        startAuthority("lic=4(la lb lc ld)");
        startHost("node01", "gpu=2(0 1)");
        startHost("node02", "gpu=2(0 1)");
        Path out = Files.createDirectories(shared.resolve("out"));
        Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rwxrwxrwx"));
        AtomicInteger done = new AtomicInteger();
        AtomicInteger rescheduled = new AtomicInteger();
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> runs = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            String host = i % 2 == 0 ? "node01" : "node02";
            String id = Integer.toString(1000 + i);
            runs.add(pool.submit(() -> {
                // A seat held from the job's first line to its last: two jobs' spans of one seat never overlap.
                String script = "s=$(date +%s%N); sleep 0.02; echo \"$SGE_HGR_lic $s $(date +%s%N)\" > " + out
                        + "/" + host + "-" + id;
                for (int attempt = 0; attempt < 200; attempt++) {
                    String r = finish(job(host, id, "lic=1", script));
                    if (r.endsWith("exit=0")) {
                        done.incrementAndGet();
                        return null;
                    }
                    if (!r.endsWith("exit=99")) {
                        failures.add(host + ":" + id + ": " + r);
                        return null;
                    }
                    rescheduled.incrementAndGet(); // the scheduler tries it again a little later
                    Thread.sleep(50);
                }
                failures.add(host + ":" + id + " never started");
                return null;
            }));
        }
        until("a third of the jobs ran: " + failures, () -> done.get() >= 60 || !failures.isEmpty());
        assertThat(failures).isEmpty();
        authority.destroyForcibly().waitFor(); // SIGKILL
        Path before = Files.copy(authorityDir.resolve("state").resolve("journal"), shared.resolve("journal-before-kill"));
        Thread.sleep(500);
        startAuthority(null);
        for (Future<?> f : runs) {
            f.get(240, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(failures).isEmpty();
        assertThat(done.get()).as("every job ran exactly once").isEqualTo(200);
        // Doubled: two jobs' spans of one seat overlap, or the authority granted a seat it held.
        Map<String, List<long[]>> spans = new HashMap<>();
        try (Stream<Path> files = Files.list(out)) {
            for (Path f : files.toList()) {
                String[] w = Files.readString(f).strip().split(" ");
                assertThat(w).as(f.toString()).hasSize(3);
                spans.computeIfAbsent(w[0], k -> new ArrayList<>()).add(new long[] {Long.parseLong(w[1]),
                        Long.parseLong(w[2])});
            }
        }
        assertThat(spans.values().stream().mapToInt(List::size).sum()).isEqualTo(200);
        assertThat(spans.keySet()).isSubsetOf("la", "lb", "lc", "ld");
        for (Map.Entry<String, List<long[]>> e : spans.entrySet()) {
            List<long[]> s = e.getValue();
            s.sort(Comparator.comparingLong(a -> a[0]));
            for (int i = 1; i < s.size(); i++) {
                assertThat(s.get(i)[0]).as("seat " + e.getKey() + " held by two jobs at once").isGreaterThan(s.get(i - 1)[1]);
            }
        }
        // Lost: once the hosts have reconciled, the authority holds nothing and every seat is free.
        until("every seat free at the authority", () -> {
            try {
                return authorityQuery(false).path("jobs").isEmpty();
            } catch (Exception e) {
                return false;
            }
        });
        assertThat(hosts.get("node01").jobs()).isEmpty();
        assertThat(hosts.get("node02").jobs()).isEmpty();
        authority.destroyForcibly().waitFor();
        assertNoDoubledGrant(before);
        assertNoDoubledGrant(authorityDir.resolve("state").resolve("journal"));
        System.out.println("AuthorityIT: 200 jobs, " + rescheduled.get() + " reschedules around the SIGKILL");
    }

    /** Replays an authority's journal: no seat is granted while another job holds it. */
    static void assertNoDoubledGrant(Path journal) throws Exception {
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
                        holder.put(id, s.job());
                    }
                    held.put(s.job(), ids);
                } else if (r instanceof JournalRecord.Ended e) {
                    for (String id : held.getOrDefault(e.job(), List.of())) {
                        holder.remove(id);
                    }
                    held.remove(e.job());
                }
            }
        }
        Files.delete(copy);
    }

    @Test
    void theAuthorityStopped_jobsWithoutGlobalMapsStillStart_oneWithIsRescheduledNamingIt() throws Exception {
        startAuthority("lic=1(la)");
        startHost("node01", "gpu=2(0 1)");
        assertThat(finish(job("node01", "5", "lic=1", "echo lic=$SGE_HGR_lic"))).contains("lic=la").endsWith("exit=0");
        authority.destroy();
        authority.waitFor();
        assertThat(finish(job("node01", "6", "gpu=1", "echo gpu=$SGE_HGR_gpu"))).contains("gpu=0").endsWith("exit=0");
        assertThat(finish(job("node01", "7", "lic=1", "echo lic=$SGE_HGR_lic")))
                .contains("authority 127.0.0.1:" + port + " unreachable").doesNotContain("lic=la").endsWith("exit=99");
        startAuthority(null);
        until("node01 reconnects with backoff and registers", () -> {
            try {
                return authorityQuery(true).path("hosts").path("node01").path("connected").asBoolean();
            } catch (Exception e) {
                return false;
            }
        });
        assertThat(finish(job("node01", "7", "lic=1", "echo lic=$SGE_HGR_lic"))).contains("lic=la").endsWith("exit=0");
    }

    @Test
    void forgedReplayedAndForeignCredentials_areRefused_andChangeNothing() throws Exception {
        startAuthority("lic=1(la)");
        InetSocketAddress at = new InetSocketAddress("127.0.0.1", port);
        String good = munged.munge().encode(MungeAuthenticator.PURPOSE.getBytes(StandardCharsets.UTF_8));
        try (Client c = Client.connect(at, () -> good, Duration.ofSeconds(5))) {
            c.call(Code.QUERY, "{}");
        }
        assertThat(refusal(at, good)).isEqualTo("munge credential replayed");
        String fresh = munged.munge().encode(MungeAuthenticator.PURPOSE.getBytes(StandardCharsets.UTF_8));
        int mid = fresh.length() / 2;
        String forged = fresh.substring(0, mid) + (fresh.charAt(mid) == 'A' ? 'B' : 'A') + fresh.substring(mid + 1);
        assertThat(refusal(at, forged)).startsWith("munge credential invalid");
        assertThat(refusal(at, "MUNGE:not-a-credential:")).startsWith("munge credential invalid");
        String user = ExecdStubIT.jobUser();
        assertThat(refusal(at, munged.encodeAs(user, MungeAuthenticator.PURPOSE))).contains("only root may connect");
        // A host whose munged has another key: its link is refused, its job with a global map rescheduled.
        try (MungeD other = MungeD.start()) {
            startHost("node03", "gpu=1(0)", "munge_socket = " + other.socket());
            assertThat(finish(job("node03", "9", "lic=1", "echo lic=$SGE_HGR_lic"))).contains("munge credential invalid")
                    .doesNotContain("lic=la").endsWith("exit=99");
            hosts.remove("node03").close();
        }
        JsonNode q = authorityQuery(true);
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
