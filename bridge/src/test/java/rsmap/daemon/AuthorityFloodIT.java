// The authority under a flood (docs/cluster.md): a real authority process with munged, real host daemons and
// the hooks through execd-stub. 3,000 idle and 1,100 slowly logging-in connections from one address leave a
// new host logging in from another address and getting a global grant within 5 s.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import rsmap.munge.MungeD;
import rsmap.wire.Code;
import rsmap.wire.Frame;

@Timeout(300)
class AuthorityFloodIT {
    static MungeD munged;
    Path shared;
    Path hook;
    Path starter;
    int port;
    Path authorityDir;
    Process authority;
    final List<Daemon> hosts = new ArrayList<>();
    final List<SocketChannel> flood = new ArrayList<>();

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
        shared = Files.createTempDirectory("rsmap-flood", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        hook = Files.copy(ExecdStubIT.HOOK, shared.resolve("rsmap-hook"));
        starter = Files.createSymbolicLink(shared.resolve("rsmap-starter"), Path.of("rsmap-hook"));
        port = AuthorityTest.freePort();
        authorityDir = shared.resolve("authority");
    }

    @AfterEach
    void tearDown() throws Exception {
        for (SocketChannel c : flood) {
            c.close();
        }
        for (Daemon d : hosts) {
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

    private void startAuthority(String global, String... more) throws Exception {
        List<String> lines = new ArrayList<>(List.of("munge_socket = " + munged.socket()));
        lines.addAll(List.of(more));
        AuthorityTest.authorityConfig(authorityDir, port, global, lines.toArray(new String[0]));
        authority = RsmapdProcess.start(authorityDir.resolve("rsmapd.conf"), authorityDir.resolve("rsmapd.sock"),
                authorityDir.resolve("log"));
    }

    private Config startHost(String host, String values) throws Exception {
        Config c = TestDaemon.config(shared.resolve(host), values, "host = " + host, "authority = 127.0.0.1:" + port,
                "munge_socket = " + munged.socket(), "socket_mode = 0666", "reconcile_interval = 0");
        hosts.add(TestDaemon.start(c));
        return c;
    }

    /** A job through execd-stub and the hooks; the job is {@code sh -c script}. */
    private Process job(Config host, String id, String request, String script) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(ExecdStubIT.STUB.toString(), "--spool",
                host.socket().resolveSibling("spool").toString(), "--host", host.host(), "--job", id, "--cwd", "/",
                "--tmpdir", shared.toString(), "--prolog", "root@" + hook + " prolog", "--starter",
                starter.toString(), "--epilog", "root@" + hook + " epilog", "--", "sh", "-c", script));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("RSMAP_SOCKET", host.socket().toString());
        pb.environment().put("RSMAP_REQUEST", request);
        return pb.start();
    }

    private static String finish(Process p) throws Exception {
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the job ends").isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8) + "exit=" + p.exitValue();
    }

    /** {@code n} connections to the authority's port from {@code from}; each sends {@code first} if not empty. */
    private int connect(InetAddress from, int n, byte[] first) throws Exception {
        int open = 0;
        for (int i = 0; i < n; i++) {
            SocketChannel ch = SocketChannel.open();
            ch.bind(new InetSocketAddress(from, 0));
            ch.connect(new InetSocketAddress("127.0.0.1", port));
            flood.add(ch);
            if (first.length > 0) {
                ch.write(ByteBuffer.wrap(first));
            }
            open++;
        }
        return open;
    }

    @Test
    void idleAndSlowLoginConnectionsFromOneAddress_leaveANewHostAGlobalGrantWithin5s() throws Exception {
        startAuthority("lic=1(la)");
        Config node01 = startHost("node01", "gpu=1(0)");
        assertThat(finish(job(node01, "1", "lic=1", "echo first=$SGE_HGR_lic"))).contains("first=la").endsWith("exit=0");
        InetAddress attacker = InetAddress.getByName("127.0.0.5");
        connect(attacker, 3_000, new byte[0]);
        // the start of an INIT frame, the rest never sent: a login that would take all the login timeout
        byte[] init = Frame.of(1, Code.INIT.value(), "1", "x".repeat(200)).encode();
        connect(attacker, 1_100, java.util.Arrays.copyOf(init, 20));
        long t0 = System.nanoTime();
        Config node02 = startHost("node02", "gpu=1(0)"); // its link logs in from 127.0.0.1
        String out = finish(job(node02, "2", "lic=1", "echo second=$SGE_HGR_lic"));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("AuthorityFloodIT: a new host's global grant " + ms + " ms after its start, during the flood");
        assertThat(out).contains("second=la").endsWith("exit=0");
        assertThat(ms).as("ms from the new host's start to its job's global grant").isLessThan(5_000);
        // node01, logged in before the flood, is served too
        assertThat(finish(job(node01, "3", "lic=1", "echo third=$SGE_HGR_lic"))).contains("third=la").endsWith("exit=0");
    }
}
