// the fail-closed job path on the hooks' side, each through the real rsmap-hook: the starter enters every job, with or without
// a request; a lost answer to JOB_START or JOB_END is asked again, a refusal or an answer over the 1 MiB frame bound never; an
// epilog whose JOB_END is refused fails; a value that does not fit is refused, never sent cut
//. Against fake-rsmapd (a real second process), the real daemon, and cgroup v1 with fake nodes.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import rsmap.daemon.config.Config;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(180)
class HookFailClosedIT {
    static final String ENTER = "0014 ";
    static final String START = "0010 ";
    static final String END = "0011 ";
    @RegisterExtension
    static final HookBuild build = new HookBuild("running hooks as the job user");
    int fakes;

    /** A fake rsmapd of root's (trusted) with {@code script}; returns its name (socket and log). */
    private String fake(String... script) throws Exception {
        String name = "fake" + (++fakes);
        build.fake(null, name, script);
        return name;
    }

    private Path socket(String name) {
        return build.dir().resolve("run").resolve(name + ".sock");
    }

    private Map<String, String> env(String name, String... kv) {
        Map<String, String> env = new HashMap<>(Map.of("JOB_ID", "7", "SGE_TASK_ID", "undefined",
                "RSMAP_SOCKET", socket(name).toString()));
        for (int i = 0; i < kv.length; i += 2) {
            env.put(kv[i], kv[i + 1]);
        }
        return env;
    }

    private HookBuild.Run hook(String who, String mode, Map<String, String> env) throws Exception {
        return HookBuild.run(who, List.of(build.hook().toString(), mode), env);
    }

    private HookBuild.Run starter(Map<String, String> env, String shell) throws Exception {
        return HookBuild.run(build.user(), List.of(build.starter().toString(), "sh", "-c", shell), env);
    }

    private Path marker() throws Exception {
        Path m = build.dir().resolve("run").resolve("ran");
        Files.deleteIfExists(m);
        return m;
    }

    // --- no request, still entered and ended ------------------------------------------------------

    @Test
    void starter_withoutRequest_entersTheJob_andRunsItWithNoSgeHgr() throws Exception {
        String f = fake("grant");
        Path ran = marker();
        HookBuild.Run r = starter(env(f, "SGE_HGR_gpu", "0 1"), "echo \"gpu=$SGE_HGR_gpu\" > " + ran);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(Files.readString(ran)).isEqualTo("gpu=\n");
        assertThat(build.log(f)).containsExactly(ENTER + "{\"job\":\"7\",\"task\":\"undefined\"}");
    }

    @Test
    void starter_withoutRequest_rsmapdUnreachable_doesNotRunTheJob() throws Exception {
        Path ran = marker();
        Path none = build.dir().resolve("run").resolve("nobody-listens.sock");
        Map<String, String> env = new HashMap<>(Map.of("JOB_ID", "7", "RSMAP_SOCKET", none.toString()));
        HookBuild.Run r = starter(env, "touch " + ran);
        assertThat(r).isEqualTo(new HookBuild.Run(99, "", "rsmap-hook: cannot reach rsmapd at " + none
                + ": No such file or directory\n"));
        assertThat(ran).doesNotExist();
    }

    @Test
    void starter_withoutRequest_refused_doesNotRunTheJob() throws Exception {
        String f = fake("refuse", "job 7: device isolation cannot be enforced: no devices hierarchy");
        Path ran = marker();
        HookBuild.Run r = starter(env(f), "touch " + ran);
        assertThat(r).isEqualTo(new HookBuild.Run(100, "",
                "rsmap-hook: job 7: device isolation cannot be enforced: no devices hierarchy\n"));
        assertThat(ran).doesNotExist();
    }

    @Test
    void epilog_withoutRequest_endsTheJob() throws Exception {
        String f = fake("grant");
        assertThat(hook(null, "epilog", env(f))).isEqualTo(new HookBuild.Run(0, "", ""));
        assertThat(build.log(f)).containsExactly(END + "{\"job\":\"7\",\"task\":\"undefined\"}");
    }

    @Test
    void prolog_withoutRequest_asksNothing() throws Exception {
        String f = fake("grant");
        assertThat(hook(null, "prolog", env(f))).isEqualTo(new HookBuild.Run(0, "", ""));
        assertThat(build.log(f)).isEmpty();
    }

    // --- a refused JOB_END fails the epilog -------------------------------------------------------

    @Test
    void epilog_refused_exits1WithTheReason_andIsNotRetried() throws Exception {
        String f = fake("refuse", "JOB_END needs root or the admin user, not 'nobody'");
        HookBuild.Run r = hook(null, "epilog", env(f, "RSMAP_REQUEST", "gpu=1"));
        assertThat(r).isEqualTo(new HookBuild.Run(1, "", "rsmap-hook: JOB_END needs root or the admin user, not 'nobody'\n"));
        assertThat(build.log(f)).hasSize(1);
    }

    @Test
    void epilog_ofAnotherUser_refusedByTheRealDaemon_exits1_andTheGrantStaysHeld() throws Exception {
        Path dir = Files.createDirectories(build.dir().resolve("real"));
        Config config = TestDaemon.config(dir, "gpu=2(0 1)", "socket_mode = 0666");
        try (Daemon daemon = TestDaemon.start(config)) {
            Map<String, String> env = new HashMap<>(Map.of("JOB_ID", "17", "NSLOTS", "1", "RSMAP_REQUEST", "gpu=1",
                    "USER", build.user(), "RSMAP_SOCKET", config.socket().toString()));
            assertThat(hook(null, "prolog", env)).isEqualTo(new HookBuild.Run(0, "SGE_HGR_gpu=0\n", ""));
            HookBuild.Run refused = hook(build.user(), "epilog", env);
            assertThat(refused.code()).as("execd puts the queue in error state").isEqualTo(1);
            assertThat(refused.err()).startsWith("rsmap-hook: ").hasLineCount(1);
            assertThat(daemon.cluster().runningJobs()).containsExactly("17");
            assertThat(hook(null, "epilog", env)).isEqualTo(new HookBuild.Run(0, "", ""));
            assertThat(daemon.cluster().runningJobs()).isEmpty();
        }
    }

    // --- a lost answer is asked again -------------------------------------------------------------

    @Test
    void prolog_answerLostOnce_asksAgain_andWritesTheGrantOnce() throws Exception {
        String f = fake("hangup", "1", "SGE_HGR_gpu=0");
        Path spool = Files.createDirectories(build.dir().resolve("run").resolve("spool-" + f));
        HookBuild.Run r = hook(null, "prolog", env(f, "RSMAP_REQUEST", "gpu=1", "NSLOTS", "1",
                "SGE_JOB_SPOOL_DIR", spool.toString()));
        assertThat(r).isEqualTo(new HookBuild.Run(0, "", ""));
        assertThat(Files.readString(spool.resolve("rsmap.env"))).isEqualTo("SGE_HGR_gpu=0\n");
        String start = START + "{\"job\":\"7\",\"task\":\"undefined\",\"slots\":1,\"request\":\"gpu=1\"}";
        assertThat(build.log(f)).as("the same JOB_START twice").containsExactly(start, start);
    }

    @Test
    void prolog_answerLostEveryTime_triesThreeTimes_thenReschedules() throws Exception {
        String f = fake("hangup", "99");
        long t0 = System.nanoTime();
        HookBuild.Run r = hook(null, "prolog", env(f, "RSMAP_REQUEST", "gpu=1"));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(r).isEqualTo(new HookBuild.Run(99, "", "rsmap-hook: lost rsmapd during JOB_START (3 tries)\n"));
        assertThat(build.log(f)).hasSize(3);
        assertThat(ms).as("1 s and 2 s between the tries").isBetween(2900L, 10_000L);
    }

    /** An answer over the 1 MiB frame bound is no answer, and final: never asked again (docs/protocol.md). */
    @Test
    void prolog_andEpilog_anAnswerOverTheFrameBound_failClosedAtOnce_neverAskedAgain() throws Exception {
        String f = fake("oversize");
        long t0 = System.nanoTime();
        HookBuild.Run r = hook(null, "prolog", env(f, "RSMAP_REQUEST", "gpu=1"));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(r).isEqualTo(new HookBuild.Run(99, "",
                "rsmap-hook: the answer to JOB_START exceeds the protocol's 1 MiB frame bound\n"));
        assertThat(build.log(f)).hasSize(1);
        assertThat(ms).as("ended before the first retry's 1 s pause").isLessThan(900);
        assertThat(hook(null, "epilog", env(f)).code()).isEqualTo(1);
        assertThat(build.log(f)).hasSize(2);
    }

    @Test
    void epilog_answerLostOnce_asksAgain() throws Exception {
        String f = fake("hangup", "1");
        assertThat(hook(null, "epilog", env(f))).isEqualTo(new HookBuild.Run(0, "", ""));
        assertThat(build.log(f)).hasSize(2);
    }

    @Test
    void starter_answerLost_isNotRetried_andDoesNotRunTheJob() throws Exception {
        String f = fake("hangup", "1", "SGE_HGR_gpu=0");
        Path ran = marker();
        HookBuild.Run r = starter(env(f), "touch " + ran);
        assertThat(r).isEqualTo(new HookBuild.Run(99, "", "rsmap-hook: lost rsmapd during JOB_ENTER\n"));
        assertThat(ran).doesNotExist();
        assertThat(build.log(f)).hasSize(1);
    }

    // --- the split into rooms: what does not fit is refused, never sent cut -------------------------------------------

    @Test
    void prolog_requestThatDoesNotFit_isRefused_notSentCut() throws Exception {
        String f = fake("grant", "SGE_HGR_gpu=0");
        String big = "gpu=1[id=" + "x".repeat(70_000) + "]";
        HookBuild.Run r = hook(null, "prolog", env(f, "RSMAP_REQUEST", big));
        assertThat(r).isEqualTo(new HookBuild.Run(100, "", "rsmap-hook: RSMAP_REQUEST is too long (" + big.length()
                + " bytes; it must fit in 65528 once quoted for JSON): refused\n"));
        // Fits as written, not once every quote is escaped.
        String quotes = "gpu=1[id=\"" + "\\".repeat(40_000) + "\"]";
        assertThat(hook(null, "prolog", env(f, "RSMAP_REQUEST", quotes)).code()).isEqualTo(100);
        assertThat(build.log(f)).as("nothing was sent").isEmpty();
        String fits = "gpu=1[id=" + "x".repeat(60_000) + "]";
        assertThat(hook(null, "prolog", env(f, "RSMAP_REQUEST", fits)).code()).isZero();
        assertThat(build.log(f)).singleElement().asString().contains(fits);
    }

    @Test
    void jobIdThatDoesNotFit_isRefusedByEveryMode_notSentCut() throws Exception {
        String f = fake("grant");
        String id = "7".repeat(300);
        Map<String, String> env = env(f, "JOB_ID", id, "RSMAP_REQUEST", "gpu=1");
        String why = "rsmap-hook: JOB_ID is too long (300 bytes; it must fit in 248 once quoted for JSON): refused\n";
        assertThat(hook(null, "prolog", env)).isEqualTo(new HookBuild.Run(100, "", why));
        assertThat(hook(null, "epilog", env)).isEqualTo(new HookBuild.Run(1, "", why));
        Path ran = marker();
        assertThat(starter(env, "touch " + ran)).isEqualTo(new HookBuild.Run(100, "", why));
        assertThat(ran).doesNotExist();
        env.put("JOB_ID", "7");
        env.put("USER", "u".repeat(300));
        assertThat(hook(null, "prolog", env).err()).startsWith("rsmap-hook: USER is too long (300 bytes");
        assertThat(build.log(f)).isEmpty();
    }

    // --- on the real path: a job without a request runs under a policy with no devices ---------------

    /** Needs rsmapd to answer JOB_ENTER of a job that holds nothing (daemon side). */
    @Test
    void aJobWithoutRequest_throughExecd_isDeniedEveryCard_realDaemonCgroupV1() throws Exception {
        Path devices = Path.of("/sys/fs/cgroup/devices");
        if (!Files.isRegularFile(devices.resolve("devices.allow"))) {
            if ("true".equals(System.getenv("CI"))) {
                fail("no cgroup v1 devices controller at " + devices);
            }
            Assumptions.abort("no cgroup v1 devices controller at " + devices);
        }
        Path dir = Files.createDirectories(build.dir().resolve("iso"));
        Path gpu0 = dir.resolve("nvidia0");
        Path gpu1 = dir.resolve("nvidia1");
        ExecdCell.sh("mknod -m 666 " + gpu0 + " c 195 0 && mknod -m 666 " + gpu1 + " c 195 1");
        Config config = TestDaemon.config(dir, "gpu=2(gpu0[devices=" + gpu0 + ":rw] gpu1[devices=" + gpu1 + ":rw])",
                "device_backend = cgroup-v1", "socket_mode = 0666", "reconcile_interval = 0");
        String id = ProcessHandle.current().pid() + "9";
        try (Daemon daemon = TestDaemon.start(config)) {
            Process p = new StubJob(dir.resolve("spool"), id, dir).hooks(build.hook(), build.starter())
                    .user(build.user()).socket(config.socket()).request(null)
                    .env("SGE_HGR_gpu", "gpu0 gpu1") // brought by the job: dropped
                    .sh("echo \"seen=$SGE_HGR_gpu\"; cat " + gpu0 + "; cat " + gpu1 + "; cat /dev/null && echo null-ok");
            String out = ExecdCell.finish(p, 60);
            assertThat(out).contains("seen=\n");
            assertThat(out).contains(gpu0 + ": Operation not permitted");
            assertThat(out).contains(gpu1 + ": Operation not permitted");
            assertThat(out).contains("null-ok").endsWith("exit=0");
            assertThat(daemon.cluster().runningJobs()).isEmpty();
        } finally {
            ExecdCell.sh("rm -f " + gpu0 + " " + gpu1);
        }
    }
}
