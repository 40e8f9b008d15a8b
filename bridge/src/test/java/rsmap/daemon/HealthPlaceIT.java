// docs/health.md, "The authority": two hosts with one card each register with a real authority (MUNGE over
// loopback TCP); `rsmap drain` on node01 (exit 0; an unknown instance exit 2) reaches the authority as a
// taint event, `rsmap place` then skips node01, `rsmap status --cluster` shows the taint, and undrain
// brings node01 back.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import rsmap.daemon.authority.AuthorityIT;
import rsmap.daemon.config.Config;
import rsmap.wire.Polls;

@Timeout(180)
class HealthPlaceIT {
    @RegisterExtension
    static final AuthorityCell CELL = new AuthorityCell("rsmap-health-place");

    /** PLACE of gpu=1 until it says {@code expected} (the hosts' events reach the authority in batches). */
    private static String placeUntil(String sock, String expected) throws Exception {
        return Polls.retry(Duration.ofSeconds(60), () -> AuthorityIT.rsmap("place", "--socket", sock, "--request", "gpu=1"),
                o -> o.contains(expected));
    }

    @Test
    void placeSkipsTheHostWhoseOnlyCardIsTainted_andStatusClusterShowsWhy() throws Exception {
        CELL.startAuthority("authority", "lic=1(la)");
        Config node01 = CELL.startHost("node01", "gpu=1(0)");
        CELL.startHost("node02", "gpu=1(0)");
        String sock = CELL.socket("authority").toString();
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
