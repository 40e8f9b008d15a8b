// rsmap status / explain / reload / events against a real rsmapd on its socket, and the one-line
// refusals when it cannot be reached or refuses.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PipedReader;
import java.io.PipedWriter;
import java.io.PrintWriter;
import java.io.BufferedReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Config;
import rsmap.daemon.Daemon;
import rsmap.wire.Client;
import rsmap.wire.Code;

@Timeout(60)
class DaemonCommandsTest {
    @TempDir
    Path tmp;
    Daemon daemon;
    Path socket;

    @BeforeEach
    void start() throws Exception {
        Files.copy(MainTest.EXAMPLES.resolve("complexes"), tmp.resolve("complexes"));
        Path conf = Files.writeString(tmp.resolve("rsmapd.conf"), String.join("\n", "complexes = complexes",
                "host = node01", "complex_values = gpu=4(0 0 1 1)", "socket = s.sock", "state_dir = state",
                "device_backend = dry-run", "admin_user = " + System.getProperty("user.name"), "reconcile_interval = 0",
                ""));
        Config config = Config.parse(Files.readString(conf), conf, "node01");
        daemon = new Daemon(config, ComplexTable.parse(Files.readString(config.complexes())), conf).serve();
        socket = config.socket();
        try (Client c = Client.connect(socket)) {
            c.call(Code.JOB_START, "{\"job\":\"7\",\"user\":\"alice\",\"request\":\"gpu=2[same=id]\"}");
        }
    }

    @AfterEach
    void stop() throws Exception {
        daemon.close();
    }

    @Test
    void status_listsEveryInstanceWithItsHolder_andTheJobs() {
        MainTest.Run r = MainTest.run("status", "--socket", socket.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo(String.join("\n", "host node01, configuration generation 1", "gpu (4 instances)",
                "  0            held by job 7            ok", "  0            held by job 7            ok",
                "  1            free                     ok", "  1            free                     ok", "jobs", "  7          alice      gpu=2[same=id] -> SGE_HGR_gpu=0 0", ""));
        assertThat(MainTest.run("status", "--socket", socket.toString(), "--json").out()).startsWith("{\"host\":\"node01\"");
    }

    @Test
    void explain_saysWhyNotNow_instanceByInstance_andOfflineAgainstAnIdleHost() {
        MainTest.Run r = MainTest.run("explain", "--socket", socket.toString(), "gpu=4[same=id]");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("gpu=4[same=id] cannot start on host node01 now\n")
                .contains("held      by job 7").contains("=> no group large enough");
        MainTest.Run offline = MainTest.run("explain", "--complexes", MainTest.COMPLEXES, "--host-values",
                "gpu=4(0 0 1 1)", "gpu=4[same=id]");
        assertThat(offline.out()).startsWith("gpu=4[same=id] cannot start on an idle host\n");
        MainTest.Run fits = MainTest.run("explain", "--socket", socket.toString(), "gpu=2[same=id]");
        assertThat(fits.out()).startsWith("gpu=2[same=id] can start on host node01 now\n");
        MainTest.Run bad = MainTest.run("explain", "--socket", socket.toString(), "gpu=1[scope=job]");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).isEqualTo("error: rsmapd: explain: column 7: scope= needs same=\n");
    }

    /** A command over the protocol's 1 MiB frame bound is the command's fault: one line, exit 2, nothing sent. */
    @Test
    void aRequestOverTheFrameBound_isOneLine_exit2_notSent_andTheDaemonServesOn() {
        String huge = "gpu=1[model=" + "x".repeat(rsmap.wire.FrameDecoder.DEFAULT_MAX_FRAME) + "]";
        MainTest.Run r = MainTest.run("explain", "--socket", socket.toString(), huge);
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).startsWith("error: the argument of QUERY (").hasLineCount(1)
                .endsWith(" bytes framed) is over the protocol's 1 MiB frame bound: not sent\n");
        assertThat(MainTest.run("status", "--socket", socket.toString()).code()).isZero();
    }

    @Test
    void reload_reportsTheGeneration() {
        MainTest.Run r = MainTest.run("reload", "--socket", socket.toString());
        assertThat(r.out()).isEqualTo("configuration generation 1 (unchanged)\n");
    }

    @Test
    void anUnreachableDaemon_isOneLine_exit1_forEveryCommandThatTalksToIt() {
        // rsmap(1), "EXIT STATUS": 1 when the daemon cannot serve the command, the same for every command.
        String none = tmp.resolve("none.sock").toString();
        List<List<String>> commands = List.of(List.of("status"), List.of("explain", "gpu=1"), List.of("reload"),
                List.of("events"), List.of("place", "--filter", "arch == \"x\""),
                List.of("place", "--filter", "arch == \"x\"", "--json"));
        for (List<String> c : commands) {
            List<String> args = new java.util.ArrayList<>(c);
            args.addAll(List.of("--socket", none));
            MainTest.Run r = MainTest.run(args.toArray(String[]::new));
            assertThat(r.code()).as("rsmap %s", c).isEqualTo(1);
            assertThat(r.err()).as("rsmap %s", c).startsWith("error: cannot reach rsmapd at " + none)
                    .endsWith("(is rsmapd running? systemctl status rsmapd)\n").hasLineCount(1);
        }
    }

    @Test
    void placeOnAnExecutionHost_isUnavailable_exit1_andPlaceSaysItsCategory_forScripts() {
        // PLACE is the authority's: an execution host's socket is a setup error (category unavailable, exit 1),
        // so that job_submit.lua pointed at one accepts jobs and logs it rather than refusing every filter.
        MainTest.Run r = MainTest.run("place", "--filter", "arch == \"x\"", "--json", "--socket", socket.toString());
        assertThat(r.code()).as(r.err()).isEqualTo(1);
        assertThat(r.err()).startsWith("error: rsmapd: PLACE is the authority's (role = authority)").hasLineCount(1);
        assertThat(r.out()).startsWith("{\"error\":\"rsmapd: PLACE is the authority's")
                .endsWith("\"category\":\"unavailable\"}\n");
        MainTest.Run shell = MainTest.run("place", "--filter", "arch == \"x\"", "--shell", "--socket", socket.toString());
        assertThat(shell.out()).contains("category='unavailable'\n");
    }

    @Test
    void timeout_isThirtySeconds_orFewerFromTheEnvironment() {
        assertThat(DaemonCommands.timeoutSeconds(null)).isEqualTo(30);
        assertThat(DaemonCommands.timeoutSeconds("3")).isEqualTo(3);
        assertThat(DaemonCommands.timeoutSeconds("300")).isEqualTo(30);
        assertThat(DaemonCommands.timeoutSeconds("-1")).isEqualTo(30);
        assertThat(DaemonCommands.timeoutSeconds("x")).isEqualTo(30);
    }

    @Test
    void events_printTheStateThenOneLinePerChange_filtered() throws Exception {
        PipedWriter pipe = new PipedWriter();
        BufferedReader lines = new BufferedReader(new PipedReader(pipe, 1 << 16));
        Thread follower = new Thread(() -> Main.run(new PrintWriter(pipe, true), new PrintWriter(new java.io.StringWriter()),
                "events", "--socket", socket.toString(), "--kind", "grant"));
        follower.setDaemon(true);
        follower.start();
        assertThat(lines.readLine()).startsWith("{\"host\":\"node01\"");
        try (Client c = Client.connect(socket)) {
            c.call(Code.JOB_END, "{\"job\":\"7\"}"); // a release: filtered out
            c.call(Code.JOB_START, "{\"job\":\"8\",\"user\":\"bob\",\"request\":\"gpu=1\"}");
        }
        assertThat(lines.readLine()).startsWith("{\"job\":\"8\",\"user\":\"bob\"").contains("\"event\":\"grant\"");
    }
}
