// Job end never widens and RELEASE narrows first (docs/isolation.md), through execd-stub, the real hooks,
// rsmap-shell inside the job and cgroup v1 with device nodes: a setsid, double-forked leftover gets EPERM on
// every card after JOB_END; a setsid holder and a close-and-reopen loop never see the card they hold go.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static rsmap.daemon.ExecdCell.ENXIO;
import static rsmap.daemon.ExecdCell.EPERM;
import static rsmap.daemon.ExecdCell.finish;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import rsmap.daemon.config.Config;

@Timeout(300)
class JobDevicesIT {
    static final Path CGROUPS = Path.of("/sys/fs/cgroup/devices/rsmap");
    /** A device the job's owner can really open and hold (the tun driver), listed as card 1. */
    static final long TUN = (10L << 8) | 200;
    ExecdCell cell;
    Path[] cards = new Path[3];
    String prefix = ProcessHandle.current().pid() + "";

    @BeforeEach
    void setUp() throws Exception {
        cell = ExecdCell.closed("rsmap-jobdev").withShell();
        cards[0] = cell.node("nvidia0", 195, 0);
        cards[1] = cell.node("card1", 10, 200);
        cards[2] = cell.node("nvidia2", 195, 2);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (cell == null) {
            return;
        }
        Files.writeString(cell.marker("stop"), "");
        cell.close();
    }

    private Config config() throws Exception {
        return TestDaemon.config(cell.dir().resolve("d"), "gpu=3(gpu0[devices=" + cards[0] + ":rw] gpu1[devices="
                + cards[1] + ":rw] gpu2[devices=" + cards[2] + ":rw])", "device_backend = cgroup-v1",
                "socket_mode = 0666", "reconcile_interval = 0");
    }

    private String open(int card) {
        return ExecdCell.open(cards[card]);
    }

    /** The same while {@code job} runs: a job that ended early fails the test with its output. */
    private static void until(String what, Process job, BooleanSupplier done) throws Exception {
        ExecdCell.until(what, () -> {
            if (!job.isAlive()) {
                try {
                    fail(what + ": the job ended: " + finish(job));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
            return done.getAsBoolean();
        });
    }

    @Test
    void aSetsidDoubleForkedLeftover_getsEpermOnEveryCardAfterJobEnd_andShowsInStatus() throws Exception {
        Config config = config();
        String a = prefix + "1";
        try (Daemon daemon = TestDaemon.start(config)) {
            // The job's script starts a setsid grandchild that outlives it, then ends: execd-stub runs the epilog.
            Path leftover = Files.writeString(cell.dir().resolve("leftover.sh"), "echo \"during: " + open(0) + " "
                    + open(2) + "\" > " + cell.marker("during") + "\n" + cell.waitFor("go") + "echo \"after: " + open(0)
                    + " " + open(1) + " " + open(2) + "\" > " + cell.marker("after.tmp") + "; mv "
                    + cell.marker("after.tmp") + " " + cell.marker("after") + "\n");
            String out = finish(cell.job(config, a, "gpu=1[id=gpu0]", "setsid sh -c 'sh " + leftover
                    + " </dev/null >/dev/null 2>&1 &' </dev/null >/dev/null 2>&1 & " + cell.waitFor("during")
                    + "echo started"));
            assertThat(out).contains("started").endsWith("exit=0");
            assertThat(Files.readString(cell.marker("during"))).isEqualTo("during: " + ENXIO + " " + EPERM + "\n");
            assertThat(daemon.cluster().runningJobs()).as("JOB_END came").doesNotContain(a);
            assertThat(ours(daemon)).containsOnlyKeys(a + ".ended-1");
            ProcessBuilder status = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), rsmap.cli.Main.class.getName(), "status", "--socket",
                    config.socket().toString()).redirectErrorStream(true);
            Process st = status.start();
            String shown = new String(st.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(st.waitFor()).as(shown).isZero();
            assertThat(shown).contains("job " + a + ".ended-1 ended; processes left in its cgroup, denied every device");
            Files.writeString(cell.marker("go"), "");
            ExecdCell.until("the leftover tried every card", () -> Files.exists(cell.marker("after")));
            assertThat(Files.readString(cell.marker("after")))
                    .isEqualTo("after: " + EPERM + " " + EPERM + " " + EPERM + "\n");
            ExecdCell.until("the leftover exits", () -> cgroupProcs(a + ".ended-1").isEmpty());
            daemon.reconcile();
            assertThat(ours(daemon)).isEmpty();
            assertThat(CGROUPS.resolve(a + ".ended-1")).as("removed once empty").doesNotExist();
            assertThat(CGROUPS.resolve(a)).doesNotExist();
        }
    }

    /**
     * A restart between a job's end and its leftover's exit: the new rsmapd lists the cgroup its earlier run
     * set aside before it serves (still closed: the leftover is refused every card), removes it once empty,
     * and removes at once one that an earlier run left empty.
     */
    @Test
    void aRestartedRsmapd_looksAfterWhatItsEarlierRunSetAside() throws Exception {
        Config config = config();
        String a = prefix + "4";
        String emptied = prefix + "5.ended-1";
        Path leftover = Files.writeString(cell.dir().resolve("leftover.sh"), "touch " + cell.marker("during") + "\n"
                + cell.waitFor("go") + "echo \"after: " + open(0) + " " + open(2) + "\" > " + cell.marker("after.tmp")
                + "; mv " + cell.marker("after.tmp") + " " + cell.marker("after") + "\n");
        List<Long> left;
        try (Daemon daemon = TestDaemon.start(config)) {
            String out = finish(cell.job(config, a, "gpu=1[id=gpu0]", "setsid sh -c 'sh " + leftover
                    + " </dev/null >/dev/null 2>&1 &' </dev/null >/dev/null 2>&1 & " + cell.waitFor("during")
                    + "echo started"));
            assertThat(out).contains("started").endsWith("exit=0");
            assertThat(ours(daemon)).containsOnlyKeys(a + ".ended-1");
            left = daemon.state().leftovers().get(a + ".ended-1");
            assertThat(left).isNotEmpty();
        }
        Files.createDirectory(CGROUPS.resolve(emptied)); // an earlier run's, whose processes have all exited
        try (Daemon daemon = TestDaemon.start(config)) {
            assertThat(ours(daemon)).as("listed again at start").containsOnlyKeys(a + ".ended-1");
            // the script is still there; the sleep it runs meanwhile is another one each time
            assertThat(daemon.state().leftovers().get(a + ".ended-1")).contains(left.get(0));
            assertThat(CGROUPS.resolve(emptied)).as("empty at start: removed").doesNotExist();
            Files.writeString(cell.marker("go"), "");
            ExecdCell.until("the leftover tried the cards", () -> Files.exists(cell.marker("after")));
            assertThat(Files.readString(cell.marker("after"))).as("still closed").isEqualTo("after: " + EPERM + " "
                    + EPERM + "\n");
            ExecdCell.until("the leftover exits", () -> cgroupProcs(a + ".ended-1").isEmpty());
            daemon.reconcile();
            assertThat(ours(daemon)).isEmpty();
            assertThat(CGROUPS.resolve(a + ".ended-1")).as("removed once empty").doesNotExist();
        } finally {
            if (Files.isDirectory(CGROUPS.resolve(emptied))) {
                Files.delete(CGROUPS.resolve(emptied));
            }
        }
    }

    @Test
    void aSetsidHolder_isRefusedNamingProcessDeviceAndDescriptor_100Times_andTheCardStaysTheJobs() throws Exception {
        Config config = config();
        String a = prefix + "2";
        try (Daemon daemon = TestDaemon.start(config)) {
            Process job = cell.job(config, a, "gpu=2", "setsid sh -c 'sh -c \"exec 3<" + cards[1] + "; touch "
                    + cell.marker("held") + "; i=0; while [ ! -e " + cell.marker("stop")
                    + " ] && [ \\$i -lt 6000 ]; do sleep 0.1; i=\\$((i+1)); done\" &' "
                    + "</dev/null >/dev/null 2>&1; rsmap-shell realloc --ids '{\"node01\":{\"gpu\":[\"gpu1\"]}}' >/dev/null;"
                    + " echo \"shrink=$?\"; touch " + cell.marker("shrunk") + "; " + cell.waitFor("end"));
            until("the holder holds card 1 and the job gave it up", job, () -> Files.exists(cell.marker("held"))
                    && Files.exists(cell.marker("shrunk")));
            for (int i = 0; i < 100; i++) {
                HookBuild.Run r = cell.rsmapShell(cell.user(), config, a, "release");
                assertThat(r.code()).as("try " + i + ": " + r.out() + r.err()).isNotZero();
                assertThat(r.err()).matches("(?s).*process [0-9]+ still holds " + cards[1] + " \\(c 10:200\\) open on "
                        + "descriptor 3.*");
                assertThat(daemon.state().job(rsmap.daemon.state.JobId.parse(a).orElseThrow()).orElseThrow().releasing().byHost().toString()).as("still the job's")
                        .contains("gpu1");
            }
            Files.writeString(cell.marker("stop"), "");
            ExecdCell.until("the holder exits", () -> holders(a) == 0);
            HookBuild.Run r = cell.rsmapShell(cell.user(), config, a, "release");
            assertThat(r.code()).as(r.err()).isZero();
            Files.writeString(cell.marker("end"), "");
            assertThat(finish(job)).contains("shrink=0").endsWith("exit=0");
        }
    }

    @Test
    void aCloseAndReopenLoop_neverKeepsADescriptorPastARelease_100Tries() throws Exception {
        Config config = config();
        String a = prefix + "3";
        // In the job's process tree: closes card 1 and opens it again, back to back; when a second open
        // is refused (the policy narrowed) while it holds one, it keeps that one until the card is its again.
        Path holder = Files.writeString(cell.dir().resolve("holder.py"), String.join("\n", "import os, sys, time",
                "card, stop, ready = sys.argv[1:4]",
                "def opens():",
                "    try:",
                "        os.close(os.open(card, os.O_RDONLY))",
                "        return True",
                "    except OSError:",
                "        return False",
                "fd = None",
                "open(ready, 'w').close()",
                "while not os.path.exists(stop):",
                "    if fd is not None:",
                "        os.close(fd)",
                "        fd = None",
                "    try:",
                "        fd = os.open(card, os.O_RDONLY)",
                "    except OSError:",
                "        time.sleep(0.0005)",
                "        continue",
                "    while not opens() and not os.path.exists(stop):",
                "        time.sleep(0.001)",
                ""));
        try (Daemon daemon = TestDaemon.start(config)) {
            Process job = cell.job(config, a, "gpu=2", "/usr/bin/python3 " + holder + " " + cards[1]
                    + " " + cell.marker("stop") + " " + cell.marker("looping") + " </dev/null >/dev/null 2>&1 & "
                    + cell.waitFor("end"));
            until("the loop runs", job, () -> Files.exists(cell.marker("looping")));
            int released = 0;
            int refused = 0;
            boolean shrunk = false;
            for (int i = 0; i < 100; i++) {
                if (!shrunk) {
                    HookBuild.Run shrink = cell.rsmapShell(cell.user(), config, a, "realloc", "--ids",
                            "{\"node01\":{\"gpu\":[\"gpu1\"]}}");
                    assertThat(shrink.code()).as(shrink.err()).isZero();
                    shrunk = true;
                }
                HookBuild.Run r = cell.rsmapShell(cell.user(), config, a, "release");
                if (r.code() == 0) {
                    released++;
                    // Released: no process of the job may hold card 1 now, nor open it again.
                    for (int look = 0; look < 20; look++) {
                        assertThat(holders(a)).as("try " + i + ": a descriptor of card 1 outlived its RELEASE").isZero();
                        Thread.sleep(2); // the thing tested: 20 looks over 40 ms find no holder
                    }
                    HookBuild.Run grow = cell.rsmapShell(cell.user(), config, a, "realloc", "--add", "gpu=1[id=gpu1]");
                    assertThat(grow.code()).as(grow.err()).isZero();
                    shrunk = false;
                } else {
                    refused++; // nothing changed: card 1 is still taken away, the next try releases it again
                    assertThat(r.err()).contains("still holds " + cards[1] + " (c 10:200) open on descriptor");
                    assertThat(daemon.state().job(rsmap.daemon.state.JobId.parse(a).orElseThrow()).orElseThrow().releasing().byHost().toString()).contains("gpu1");
                }
            }
            System.out.println("close-and-reopen: " + released + " released, " + refused + " refused of 100");
            Files.writeString(cell.marker("stop"), "");
            Files.writeString(cell.marker("end"), "");
            assertThat(finish(job)).endsWith("exit=0");
        }
    }

    /**
     * The daemon's leftovers of this test JVM's jobs: every rsmapd on this machine sets aside in the one
     * {@link #CGROUPS}, and a daemon starting lists all it finds there (an earlier run's, another test's).
     */
    private java.util.Map<String, List<Long>> ours(Daemon daemon) {
        java.util.Map<String, List<Long>> mine = new java.util.LinkedHashMap<>(daemon.state().leftovers());
        mine.keySet().removeIf(k -> !k.matches(prefix + "[0-9]\\.ended-[0-9]+"));
        return mine;
    }

    private static List<Long> cgroupProcs(String job) {
        try {
            return Files.readAllLines(CGROUPS.resolve(job).resolve("cgroup.procs")).stream().filter(l -> !l.isBlank())
                    .map(Long::parseLong).toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /** How many descriptors of card 1 (the tun driver) the processes in the job's cgroup hold now. */
    private static int holders(String job) {
        int n = 0;
        for (long pid : cgroupProcs(job)) {
            try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "fd"))) {
                for (Path fd : fds) {
                    try {
                        if ((Long) Files.getAttribute(fd, "unix:rdev") == TUN
                                && ((Integer) Files.getAttribute(fd, "unix:mode") & 0170000) == 0020000) {
                            n++;
                        }
                    } catch (IOException | UnsupportedOperationException e) {
                        // closed meanwhile
                    }
                }
            } catch (IOException e) {
                // exited meanwhile
            }
        }
        return n;
    }
}
