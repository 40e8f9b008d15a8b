// docs/health.md, "The authority": two hosts with one card each register with a real authority (MUNGE over
// loopback TCP); `rsmap drain` on node01 (exit 0; an unknown instance exit 2) reaches the authority as a
// taint event, `rsmap place` then skips node01, `rsmap status --cluster` shows the taint, and undrain
// brings node01 back.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import rsmap.munge.MungeD;
import rsmap.wire.Ports;

@Timeout(180)
class HealthPlaceIT {
    Path shared;
    MungeD munged;
    Process authority;
    final List<Daemon> hosts = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (Daemon d : hosts) {
            d.close();
        }
        if (authority != null) {
            authority.destroyForcibly().waitFor();
        }
        if (munged != null) {
            munged.close();
        }
        if (shared != null) {
            try (Stream<Path> all = Files.walk(shared)) {
                for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    private Config host(String name, int port) throws Exception {
        Config c = TestDaemon.config(shared.resolve(name), "gpu=1(0)", "host = " + name, "authority = 127.0.0.1:" + port,
                "munge_socket = " + munged.socket(), "reconcile_interval = 0");
        hosts.add(TestDaemon.start(c));
        return c;
    }

    /** PLACE of gpu=1 until it says {@code expected} (the hosts' events reach the authority in batches). */
    private static String placeUntil(String sock, String expected) throws Exception {
        String out = "";
        for (int i = 0; i < 200 && !out.contains(expected); i++) {
            Thread.sleep(50);
            out = AuthorityIT.rsmap("place", "--socket", sock, "--request", "gpu=1");
        }
        return out;
    }

    @Test
    void placeSkipsTheHostWhoseOnlyCardIsTainted_andStatusClusterShowsWhy() throws Exception {
        ExecdStubIT.jobUser();
        munged = MungeD.start();
        shared = Files.createTempDirectory("rsmap-health-place", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        int port = Ports.free();
        Path dir = shared.resolve("authority");
        AuthorityTest.authorityConfig(dir, port, "lic=1(la)", "munge_socket = " + munged.socket());
        authority = RsmapdProcess.start(dir.resolve("rsmapd.conf"), dir.resolve("rsmapd.sock"), dir.resolve("log"));
        Config node01 = host("node01", port);
        host("node02", port);
        String sock = dir.resolve("rsmapd.sock").toString();
        assertThat(placeUntil(sock, "can start now on node01")).contains("can start now on node01").endsWith("exit=0");

        assertThat(AuthorityIT.rsmap("drain", "--socket", node01.socket().toString(), "gpu", "7")).contains("gpu has no instance 7")
                .endsWith("exit=2");
        assertThat(AuthorityIT.rsmap("drain", "--socket", node01.socket().toString(), "gpu", "0", "--reason", "fan failed"))
                .startsWith("gpu 0: tainted (admin: fan failed, since ").endsWith("exit=0");
        assertThat(placeUntil(sock, "can start now on node02")).as("node01's only card is tainted")
                .contains("can start now on node02").endsWith("exit=0");
        assertThat(AuthorityIT.rsmap("status", "--cluster", "--socket", sock)).contains("tainted (admin: fan failed, since ")
                .endsWith("exit=0");
        assertThat(AuthorityIT.rsmap("status", "--socket", node01.socket().toString())).contains("tainted (admin: fan failed")
                .endsWith("exit=0");
        assertThat(AuthorityIT.rsmap("status", "--json", "--socket", node01.socket().toString()))
                .contains("{\"id\":\"0\",\"holder\":\"\",\"health\":{\"source\":\"admin\",\"reason\":\"fan failed\","
                        + "\"since\":\"").endsWith("exit=0");
        assertThat(AuthorityIT.rsmap("status", "--json", "--socket", sock)).contains("\"health\":\"ok\"").endsWith("exit=0");

        assertThat(AuthorityIT.rsmap("undrain", "--socket", node01.socket().toString(), "gpu", "0")).startsWith("gpu 0: ok")
                .endsWith("exit=0");
        assertThat(placeUntil(sock, "can start now on node01")).contains("can start now on node01").endsWith("exit=0");
    }
}
