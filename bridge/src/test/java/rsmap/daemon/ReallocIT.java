// "Done when", through execd-stub, the real hooks, rsmap-shell inside the job and cgroup v1 with
// fake device nodes: a job grows by card 1 and opens it (ENXIO, not EPERM); it shrinks, and after its
// RELEASE card 1 is EPERM again and only then goes to another job's waiting realloc; a waiting realloc is
// cancelled; reallocation off answers UNSUPPORTED; another user is refused; SIGKILL between SUCCESS and
// RELEASE, restart, and the RELEASE still completes the shrink.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.daemon.ExecdCell.ENXIO;
import static rsmap.daemon.ExecdCell.EPERM;
import static rsmap.daemon.ExecdCell.finish;
import static rsmap.daemon.ExecdCell.until;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import rsmap.daemon.config.Config;

@Timeout(180)
class ReallocIT {
    String prefix = ProcessHandle.current().pid() + "";
    ExecdCell cell;
    Path[] cards = new Path[3];

    @BeforeEach
    void setUp() throws Exception {
        cell = ExecdCell.sticky("rsmap-realloc").withShell();
        for (int i = 0; i < 3; i++) {
            cards[i] = cell.node("nvidia" + i, 195, i);
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        if (cell != null) {
            cell.close();
        }
    }

    private Config config(String... more) throws Exception {
        List<String> settings = new ArrayList<>(List.of("device_backend = cgroup-v1", "socket_mode = 0666",
                "reconcile_interval = 0"));
        settings.addAll(List.of(more));
        return TestDaemon.config(cell.dir().resolve("d" + System.nanoTime()), "gpu=3(" + card(0) + " " + card(1) + " "
                + card(2) + ")", settings.toArray(new String[0]));
    }

    private String card(int i) {
        return "gpu" + i + "[devices=" + cards[i] + ":rw]";
    }

    private String open(int card) {
        return ExecdCell.open(cards[card]);
    }

    @Test
    void aJobGrowsByCard1_opensIt_shrinks_andOnlyItsReleaseGivesCard1ToAWaitingRealloc() throws Exception {
        Config config = config();
        String a = prefix + "1";
        String b = prefix + "2";
        try (Daemon daemon = TestDaemon.start(config)) {
            // B holds card 2; once A has shrunk, B asks for one more card (it waits), then for another (cancelled).
            Process jobB = cell.job(config, b, "gpu=1[id=gpu2]", cell.waitFor("shrunk")
                    + "touch " + cell.marker("b-asks") + "; rsmap-shell realloc --add gpu=1 --tag b1 > "
                    + cell.marker("b1.out")
                    + "; echo \"b1=$?\"; touch " + cell.marker("b-answered") + "; cat " + cell.marker("b1.out")
                    + "; echo \"b-card1: " + open(1) + "\"; rsmap-shell realloc --add gpu=1 --tag b2; echo \"b2=$?\"");
            until("job B holds card 2", () -> daemon.cluster().runningJobs().contains(b));
            Process jobA = cell.job(config, a, "gpu=1", "echo \"before: " + open(1) + "\"; "
                    + "rsmap-shell realloc --add gpu=1 --tag grow; echo \"grow=$?\"; "
                    + "echo \"grown: " + open(1) + "\"; "
                    + "rsmap-shell realloc --ids '{\"node01\":{\"gpu\":[\"gpu1\"]}}' --tag shrink; echo \"shrink=$?\"; "
                    + "echo \"shrunk: " + open(1) + "\"; touch " + cell.marker("shrunk") + "; "
                    + cell.waitFor("release")
                    + "rsmap-shell release; echo \"release=$?\"; echo \"released: " + open(1) + "\"; "
                    + "touch " + cell.marker("a-released") + "; " + cell.waitFor("a-end"));
            until("B asks for a card", () -> Files.exists(cell.marker("b-asks")));
            Thread.sleep(700); // the thing tested: B is not answered within 700 ms of asking
            assertThat(cell.marker("b-answered")).as("card 1 is taken away from A, not released: B waits")
                    .doesNotExist();
            assertThat(daemon.waitingReallocs()).isEqualTo(1);
            Files.writeString(cell.marker("release"), "");
            until("A released card 1", () -> Files.exists(cell.marker("a-released")));
            // A still holds card 0, B cards 2 and 1: B's second realloc waits until it is cancelled.
            until("B's second realloc waits", () -> daemon.waitingReallocs() == 1
                    && Files.exists(cell.marker("b-answered")));
            HookBuild.Run cancel = cell.rsmapShell(null, config, b, "cancel", "b2");
            assertThat(cancel.code()).as(cancel.err()).isZero();
            String outB = finish(jobB);
            assertThat(outB).contains("b1=0\n").contains("SGE_HGR_gpu=gpu1 gpu2\n")
                    .contains("b-card1: " + ENXIO + "\n")
                    .contains("rsmap-shell: realloc b2: CANCEL").contains("b2=3\n").endsWith("exit=0");
            Files.writeString(cell.marker("a-end"), "");
            String outA = finish(jobA);
            assertThat(outA).contains("before: " + EPERM + "\n")
                    .contains("SGE_HGR_gpu=gpu0 gpu1\ngrow=0\n")
                    .contains("grown: " + ENXIO + "\n")
                    .contains("SGE_HGR_gpu=gpu0\nshrink=0\n")
                    .contains("shrunk: " + ENXIO + "\n") // given up, not released yet: still its own
                    .contains("SGE_HGR_gpu=gpu0\nrelease=0\n")
                    .contains("released: " + EPERM + "\n")
                    .endsWith("exit=0");
            assertThat(daemon.cluster().runningJobs()).isEmpty();
        }
    }

    @Test
    void reallocOff_isUnsupported_andAnotherUsersReallocIsRefused() throws Exception {
        Config off = config("realloc = off");
        String a = prefix + "3";
        try (Daemon daemon = TestDaemon.start(off)) {
            Process job = cell.job(off, a, "gpu=1", cell.waitFor("go")
                    + "rsmap-shell realloc --add gpu=1 --tag t; echo \"t=$?\"");
            until("the job runs", () -> daemon.cluster().runningJobs().contains(a));
            String other = otherUser();
            HookBuild.Run refused = cell.rsmapShell(other, off, a, "realloc", "--add", "gpu=1");
            assertThat(refused.code()).as(refused.err()).isEqualTo(2);
            assertThat(refused.err()).contains("REALLOC of job " + a + " is for its owner '" + cell.user() + "'");
            Files.writeString(cell.marker("go"), "");
            assertThat(finish(job)).contains("rsmap-shell: realloc t: UNSUPPORTED: reallocation is off\n")
                    .contains("t=3\n").endsWith("exit=0");
        }
    }

    @Test
    void sigkillBetweenSuccessAndRelease_restart_andTheReleaseCompletesTheShrink() throws Exception {
        Config config = config();
        Path conf = config.complexes().resolveSibling("rsmapd.conf");
        String a = prefix + "4";
        Process daemon = RsmapdProcess.start(conf, config.socket(), cell.dir().resolve("rsmapd.log"));
        try {
            Process job = cell.job(config, a, "gpu=2", "rsmap-shell realloc --ids '{\"node01\":{\"gpu\":[\"gpu1\"]}}'; "
                    + "echo \"shrink=$?\"; touch " + cell.marker("shrunk") + "; " + cell.waitFor("restarted")
                    + "rsmap-shell release; echo \"release=$?\"; echo \"released: " + open(1) + "\"; echo \"kept: "
                    + open(0) + "\"");
            until("the job has shrunk", () -> Files.exists(cell.marker("shrunk")));
            daemon.destroyForcibly(); // SIGKILL: after the SUCCESS, before the RELEASE
            daemon.waitFor();
            daemon = RsmapdProcess.start(conf, config.socket(), cell.dir().resolve("rsmapd.log"));
            Files.writeString(cell.marker("restarted"), "");
            assertThat(finish(job)).contains("shrink=0\n").contains("release=0\n")
                    .contains("released: " + EPERM + "\n").contains("kept: " + ENXIO + "\n").endsWith("exit=0");
        } finally {
            daemon.destroyForcibly();
            daemon.waitFor();
        }
    }

    @Test
    void aFluxStyleShell_growsWithAnRfc51Jobspec_andReleasesByR_printingTheRDeltas() throws Exception {
        Config config = config();
        String a = prefix + "5";
        Path stub = Files.copy(StubJob.STUB.resolveSibling("shell-stub"), cell.dir().resolve("shell-stub"));
        Path spec = Files.writeString(cell.dir().resolve("add.json"), "{\"version\":1,\"resources\":["
                + "{\"type\":\"slot\",\"count\":1,\"label\":\"task\",\"with\":[{\"type\":\"core\",\"count\":1},{\"type\":\"gpu\","
                + "\"count\":1}]}],\"tasks\":[{\"command\":[\"app\"],\"slot\":\"task\",\"count\":{\"per_slot\":1}}],"
                + "\"attributes\":{\"system\":{\"duration\":0}}}");
        Path r = Files.writeString(cell.dir().resolve("card1.R"), "{\"version\":1,\"execution\":{\"R_lite\":["
                + "{\"rank\":\"0\",\"children\":{\"core\":\"\",\"gpu\":\"1\"}}],\"nodelist\":[\"node01\"],"
                + "\"starttime\":0,\"expiration\":0}}");
        try (Daemon daemon = TestDaemon.start(config)) {
            String out = finish(cell.job(config, a, "gpu=1", stub + " realloc --spec-add " + spec + " --tag flux; "
                    + "echo \"card1: " + open(1) + "\"; rsmap-shell realloc --ids '{\"node01\":{\"gpu\":[\"gpu1\"]}}' "
                    + ">/dev/null; " + stub + " release --R " + r + "; echo \"card1: " + open(1) + "\""));
            List<String> lines = out.lines().toList();
            com.fasterxml.jackson.databind.JsonNode alloc = new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree(lines.get(0));
            assertThat(alloc.path("tag").asText()).as(out).isEqualTo("flux");
            assertThat(alloc.path("R_delta_add").path("execution").path("R_lite").toString())
                    .isEqualTo("[{\"rank\":\"0\",\"children\":{\"core\":\"\",\"gpu\":\"1\"}}]");
            assertThat(lines.subList(1, 3)).containsExactly("type=0", "card1: " + ENXIO);
            assertThat(lines.get(3)).contains("\"grants\":{\"node01\":{\"gpu\":[\"gpu0\"]}}");
            assertThat(lines.get(4)).isEqualTo("card1: " + EPERM);
            assertThat(out).endsWith("exit=0");
            assertThat(daemon.cluster().runningJobs()).isEmpty();
        }
    }

    @Test
    void aGrowOverRealloc_max_grow_isDenied_namingTheLimit_andAJobGrowsBackWhatWasTakenAway() throws Exception {
        Config config = config("realloc_max_grow = 0"); // the strict setting: TestDaemon's own is larger
        String a = prefix + "6";
        try (Daemon daemon = TestDaemon.start(config)) {
            String out = finish(cell.job(config, a, "gpu=1", "rsmap-shell realloc --add gpu=7; echo \"seven=$?\"; "
                    + "rsmap-shell realloc --add gpu=1; echo \"one=$?\"; echo \"card1: " + open(1) + "\"; "
                    + "rsmap-shell realloc --ids '{\"node01\":{\"gpu\":[\"gpu0\"]}}' >/dev/null; rsmap-shell release "
                    + ">/dev/null; rsmap-shell realloc --add gpu=1; echo \"back=$?\""));
            assertThat(out).contains("rsmap-shell: realloc tid-").contains(": DENY: job " + a + " would hold 8 gpu instances, "
                    + "over its limit of 1 (1 at start + realloc_max_grow 0 for gpu)").contains("seven=3\n")
                    .contains("would hold 2 gpu instances, over its limit of 1").contains("one=3\n")
                    .contains("card1: " + EPERM + "\n").contains("back=0\n").endsWith("exit=0");
        }
        Config byDefault = config("realloc_max_grow = start"); // the default, said here: TestDaemon's own is larger
        String c = prefix + "8";
        try (Daemon daemon = TestDaemon.start(byDefault)) {
            String out = finish(cell.job(byDefault, c, "gpu=1", "rsmap-shell realloc --add gpu=7; echo \"seven=$?\"; "
                    + "rsmap-shell realloc --add gpu=1 >/dev/null; echo \"one=$?\"; "
                    + "rsmap-shell realloc --add gpu=1; echo \"again=$?\""));
            assertThat(out).contains(": DENY: job " + c + " would hold 8 gpu instances, over its limit of 2 "
                    + "(1 at start + realloc_max_grow start for gpu)").contains("seven=3\n").contains("one=0\n")
                    .contains("would hold 3 gpu instances, over its limit of 2").contains("again=3\n").endsWith("exit=0");
        }
        Config one = config("realloc_max_grow = gpu=1");
        String b = prefix + "7";
        try (Daemon daemon = TestDaemon.start(one)) {
            String out = finish(cell.job(one, b, "gpu=1", "rsmap-shell realloc --add gpu=2; echo \"two=$?\"; "
                    + "rsmap-shell realloc --add gpu=1 >/dev/null; echo \"one=$?\"; echo \"card1: " + open(1) + "\""));
            assertThat(out).contains("over its limit of 2 (1 at start + realloc_max_grow 1 for gpu)").contains("two=3\n")
                    .contains("one=0\n").contains("card1: " + ENXIO + "\n").endsWith("exit=0");
        }
    }

    /** A user that neither owns the job nor administers rsmapd. */
    private static String otherUser() throws Exception {
        ExecdCell.sh("id -u rsmap-other >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/sh rsmap-other");
        return "rsmap-other";
    }
}
