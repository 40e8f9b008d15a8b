// rsmapd out of file descriptors at accept (EMFILE): it says so once, waits a tick between tries instead of
// spinning on a listener that stays ready, goes on serving the sessions it has, and accepts again once
// descriptors are free. The real rsmapd process, its descriptor limit lowered with prlimit(1).
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.config.Config;
import rsmap.wire.Client;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Polls;

@Timeout(180)
class OutOfDescriptorsIT {
    /** What a log says at the start of a streak of failed accepts (Admission). */
    private static final String SAID = "cannot accept connections (retried every tick)";
    /** Descriptors left to the daemon above what it holds at rest: a few connections, then EMFILE. */
    private static final int ROOM = 6;
    /** Connections the test opens: well beyond that room and the listen backlog together. */
    private static final int CONNECTS = 64;
    /** How long the daemon's CPU is watched while it cannot accept. */
    private static final long WATCH_MS = 2000;

    @TempDir
    Path dir;
    Process daemon;
    final List<SocketChannel> held = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (SocketChannel c : held) {
            c.close();
        }
        if (daemon != null) {
            daemon.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void emfileAtAccept_saidOnce_noSpin_sessionsServed_acceptsAgainWhenFree() throws Exception {
        boolean prlimit = ExecdCell.sh("command -v prlimit || echo none").strip().startsWith("/");
        if ("true".equals(System.getenv("CI"))) {
            assertThat(prlimit).as("prlimit(1) (util-linux) is needed under CI=true").isTrue();
        }
        assumeTrue(prlimit, "prlimit(1) not found");
        Config config = TestDaemon.config(dir.resolve("d"), "gpu=2(0 1)", "socket_mode = 0666",
                "reconcile_interval = 0");
        Path socket = config.socket();
        Path log = dir.resolve("rsmapd.log");
        daemon = RsmapdProcess.start(config.complexes().resolveSibling("rsmapd.conf"), socket, log);
        try (Client before = Client.connect(socket, Duration.ofSeconds(10))) {
            assertThat(query(before)).as("a session open before the limit").isNotEmpty();
            int open = descriptors();
            ExecdCell.sh("prlimit --pid " + daemon.pid() + " --nofile=" + (open + ROOM) + ":" + (open + ROOM));

            for (int i = 0; i < CONNECTS; i++) {
                SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX);
                c.configureBlocking(false); // past the backlog a connect is refused at once, never waits
                try {
                    c.connect(UnixDomainSocketAddress.of(socket));
                    held.add(c);
                } catch (java.io.IOException full) {
                    c.close();
                }
            }
            assertThat(held.size()).as("connects the kernel took").isGreaterThan(ROOM);
            Polls.await(Duration.ofSeconds(30), () -> Files.readString(log).contains(SAID));
            assertThat(Files.readString(log)).as("EMFILE at accept is said").contains(SAID);

            long cpu0 = cpuTicks();
            Thread.sleep(WATCH_MS); // the window whose CPU is measured
            long cpuMs = (cpuTicks() - cpu0) * 10; // USER_HZ = 100
            assertThat(cpuMs).as("CPU of a daemon that cannot accept, over %d ms: no spin on the ready listener",
                    WATCH_MS).isLessThan(WATCH_MS / 4);
            assertThat(query(before)).as("the session open before is still served").isNotEmpty();

            // A descriptor freed in the middle of the streak (the first connection, accepted, now closed)
            // lets one queued connection through; the next accept fails again: still the same streak.
            int full = descriptors();
            held.remove(0).close();
            Thread.sleep(1000); // the thing tested: a second on, the freed descriptor is taken and nothing more is said
            assertThat(descriptors()).as("the freed descriptor taken by a queued connection").isEqualTo(full);
            assertThat(Files.readString(log).split(java.util.regex.Pattern.quote(SAID), -1).length - 1)
                    .as("said once for the whole streak").isEqualTo(1);

            for (SocketChannel c : held) {
                c.close();
            }
            held.clear();
            // the descriptors of the closed connections are freed as the daemon reads their ends
            List<Frame> answer = Polls.retry(Duration.ofSeconds(10), () -> {
                try (Client after = Client.connect(socket, Duration.ofSeconds(2))) {
                    return query(after);
                } catch (java.io.IOException | Client.Refusal notYet) {
                    return List.<Frame>of();
                }
            }, a -> !a.isEmpty());
            assertThat(answer).as("a new connection is served once descriptors are free").isNotEmpty();
        }
        assertThat(daemon.isAlive()).as(Files.readString(log)).isTrue();
    }

    private static List<Frame> query(Client c) throws Exception {
        return c.call(Code.QUERY);
    }

    private int descriptors() throws Exception {
        try (var fds = Files.list(Path.of("/proc", Long.toString(daemon.pid()), "fd"))) {
            return (int) fds.count();
        }
    }

    /** utime + stime of the daemon, in clock ticks (proc(5)). */
    private long cpuTicks() throws Exception {
        String stat = Files.readString(Path.of("/proc", Long.toString(daemon.pid()), "stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]); // fields 14 and 15, counted after the name
    }
}
