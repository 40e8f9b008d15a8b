// The C hook against a real rsmapd: prolog grants and leaves SGE_HGR_* for the starter, exit codes as
// execd reads them (0 granted, 99 reschedule, 100 job error), epilog gives the grant back. The starter's
// side of JOB_ENTER, and the owner the prolog reports, against a scripted stand-in (FakeDaemon).
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.HookBuild.Run;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;

class RsmapHookIT {
    @TempDir
    Path tmp;
    Config config;
    Daemon daemon;

    @BeforeEach
    void start() throws Exception {
        assertThat(ExecdCell.HOOK).as("built by the Maven build (gcc)").isExecutable();
        config = TestDaemon.config(tmp, "gpu=4(0 0 1 1)");
        daemon = TestDaemon.start(config);
    }

    @AfterEach
    void stop() throws Exception {
        daemon.close();
    }

    private Run hook(String mode, Map<String, String> env) throws Exception {
        return run(List.of(ExecdCell.HOOK.toString(), mode), env);
    }

    /** Runs {@code cmd} with exactly {@code env} (and PATH, and the real daemon's socket unless it says otherwise). */
    private Run run(List<String> cmd, Map<String, String> env) throws Exception {
        Map<String, String> all = new HashMap<>(Map.of("RSMAP_SOCKET", config.socket().toString()));
        all.putAll(env);
        return HookBuild.run(null, cmd, all, 20);
    }

    @Test
    void prolog_grants_writesTheEnvironmentForTheStarter_epilogGivesBack() throws Exception {
        Path spool = Files.createDirectories(tmp.resolve("active_jobs/7.1"));
        Map<String, String> env = Map.of("JOB_ID", "7", "SGE_TASK_ID", "undefined", "NSLOTS", "1",
                "RSMAP_REQUEST", "gpu=2[same=id]", "SGE_JOB_SPOOL_DIR", spool.toString());
        Run prolog = hook("prolog", env);
        assertThat(prolog.code()).as(prolog.err()).isZero();
        assertThat(Files.readString(spool.resolve("rsmap.env"))).isEqualTo("SGE_HGR_gpu=0 0\n");
        assertThat(daemon.cluster().runningJobs()).containsExactly("7");
        Run epilog = hook("epilog", env);
        assertThat(epilog.code()).isZero();
        assertThat(daemon.cluster().runningJobs()).isEmpty();
        assertThat(hook("epilog", env).code()).as("again: nothing held, still fine").isZero();
    }

    @Test
    void prolog_hostCannotServeNow_asksExecdToReschedule() throws Exception {
        hook("prolog", Map.of("JOB_ID", "1", "NSLOTS", "1", "RSMAP_REQUEST", "gpu=3"));
        Run second = hook("prolog", Map.of("JOB_ID", "2", "NSLOTS", "1", "RSMAP_REQUEST", "gpu=2"));
        assertThat(second.code()).isEqualTo(99);
        assertThat(second.err()).startsWith("rsmap-hook: job 2 cannot be granted now: gpu: needs 2 free matching instances");
    }

    @Test
    void prolog_malformedRequest_putsTheJobInError() throws Exception {
        Run r = hook("prolog", Map.of("JOB_ID", "3", "NSLOTS", "1", "RSMAP_REQUEST", "gpu=1[scope=job]"));
        assertThat(r.code()).isEqualTo(100);
        assertThat(r.err()).isEqualTo("rsmap-hook: request: column 7: scope= needs same=\n");
    }

    @Test
    void prolog_withoutRequest_isANoOp_andWithoutDaemon_reschedules() throws Exception {
        assertThat(hook("prolog", Map.of("JOB_ID", "4")).code()).isZero();
        daemon.close();
        // The epilog asks whether or not there was a request: JOB_END names the job.
        assertThat(hook("epilog", Map.of("JOB_ID", "4"))).as("unanswered: the grant may still be held")
                .isEqualTo(new Run(1, "", "rsmap-hook: cannot reach rsmapd at " + config.socket() + ": No such file or directory\n"));
        Run r = hook("prolog", Map.of("JOB_ID", "5", "RSMAP_REQUEST", "gpu=1"));
        assertThat(r.code()).isEqualTo(99);
        assertThat(r.err()).startsWith("rsmap-hook: cannot reach rsmapd");
        daemon = TestDaemon.start(config);
    }

    @Test
    void prolog_requestWithQuotesAndBackslashes_travelsIntact() throws Exception {
        Run r = hook("prolog", Map.of("JOB_ID", "6", "RSMAP_REQUEST", "gpu=1[id=\"\\x]"));
        // It parsed (a mangled one would be refused: exit 100) and matches no identifier here.
        assertThat(r.code()).isEqualTo(99);
        assertThat(r.err()).isEqualTo("rsmap-hook: job 6 cannot be granted now: gpu: needs 1 free matching instance, "
                + "0 available\n");
    }

    // --- the owner the prolog reports (JOB_START "user") -------------------------------------------------

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void prolog_reportsTheJobOwner_fromUser_elseLogname() throws Exception {
        Path sock = tmp.resolve("fake.sock");
        try (FakeDaemon fake = new FakeDaemon(sock, c -> FakeDaemon.granting(c, "{}", "SGE_HGR_gpu=0"))) {
            Map<String, String> env = new HashMap<>(Map.of("RSMAP_SOCKET", sock.toString(), "JOB_ID", "7",
                    "NSLOTS", "2", "RSMAP_REQUEST", "gpu=1", "USER", "alice", "LOGNAME", "bob"));
            assertThat(hook("prolog", env).code()).isZero();
            env.remove("USER");
            assertThat(hook("prolog", env).code()).isZero();
            env.remove("LOGNAME");
            assertThat(hook("prolog", env).code()).isZero();
            List<String> sent = fake.received.stream().map(f -> f.code() + " " + f.text(0)).toList();
            int start = Code.JOB_START.value();
            assertThat(sent).containsExactly(
                    start + " {\"job\":\"7\",\"task\":\"undefined\",\"user\":\"alice\",\"slots\":2,\"request\":\"gpu=1\"}",
                    start + " {\"job\":\"7\",\"task\":\"undefined\",\"user\":\"bob\",\"slots\":2,\"request\":\"gpu=1\"}",
                    start + " {\"job\":\"7\",\"task\":\"undefined\",\"slots\":2,\"request\":\"gpu=1\"}");
        }
    }

    // --- the starter: JOB_ENTER, the granted environment, fail closed -------------------------------------

    /** The starter's environment as the job sees it: what execd loaded, a request, a brought SGE_HGR_. */
    private Map<String, String> starterEnv(Path sock) throws Exception {
        Path spool = Files.createDirectories(tmp.resolve("active_jobs/7.1"));
        // What the prolog left for admins; the job could have rewritten it: the starter must not read it.
        Files.writeString(spool.resolve("rsmap.env"), "SGE_HGR_gpu=evil\n");
        return new HashMap<>(Map.of("RSMAP_SOCKET", sock.toString(), "JOB_ID", "7", "SGE_TASK_ID", "undefined",
                "RSMAP_REQUEST", "gpu=2[same=id]", "SGE_JOB_SPOOL_DIR", spool.toString(), "SGE_HGR_gpu", "brought",
                "SGE_HGR_nic", "ib9", "KEEP", "me"));
    }

    private List<String> starter(String... job) {
        List<String> cmd = new ArrayList<>(List.of(ExecdCell.HOOK.toString(), "starter"));
        cmd.addAll(List.of(job));
        return cmd;
    }

    private static List<String> hgrAndKeep(String out) {
        return out.lines().filter(l -> l.startsWith("SGE_HGR_") || l.startsWith("KEEP=")).sorted().toList();
    }

    @Test
    void starter_entersTheJob_andRunsItWithOnlyTheGrantFromTheAnswer() throws Exception {
        Path sock = tmp.resolve("fake.sock");
        try (FakeDaemon fake = new FakeDaemon(sock, c -> FakeDaemon.granting(c,
                "{\"job\":\"7\",\"env\":{\"SGE_HGR_gpu\":\"1 1\"}}", "SGE_HGR_gpu=1 1", "LD_PRELOAD=/evil.so"))) {
            Run r = run(starter("env"), starterEnv(sock));
            assertThat(r.code()).as(r.err()).isZero();
            // the brought SGE_HGR_nic and SGE_HGR_gpu are gone, rsmap.env was not read, only SGE_HGR_ names taken
            assertThat(hgrAndKeep(r.out())).containsExactly("KEEP=me", "SGE_HGR_gpu=1 1");
            assertThat(r.out()).doesNotContain("LD_PRELOAD");
            Frame enter = fake.received.get(0);
            assertThat(enter.code()).isEqualTo(0x0014);
            assertThat(JSON.readTree(enter.text(0))).isEqualTo(JSON.readTree("{\"job\":\"7\",\"task\":\"undefined\"}"));
        }
    }

    @Test
    void starter_arrayTask_entersThatTask() throws Exception {
        Path sock = tmp.resolve("fake.sock");
        try (FakeDaemon fake = new FakeDaemon(sock, c -> FakeDaemon.granting(c, "{}", "SGE_HGR_gpu=0"))) {
            Map<String, String> env = starterEnv(sock);
            env.put("SGE_TASK_ID", "12");
            assertThat(run(starter("true"), env).code()).isZero();
            assertThat(fake.received.get(0).text(0)).isEqualTo("{\"job\":\"7\",\"task\":\"12\"}");
        }
    }

    @Test
    void starter_refused_saysWhyInOneLine_andDoesNotRunTheJob() throws Exception {
        Path sock = tmp.resolve("fake.sock");
        Path ran = tmp.resolve("ran");
        try (FakeDaemon fake = new FakeDaemon(sock,
                c -> FakeDaemon.refusing(c, "job 7 belongs to alice, not to mallory", rsmap.wire.Category.DENIED))) {
            Run r = run(starter("touch", ran.toString()), starterEnv(sock));
            assertThat(r.code()).as("execd puts a job that exits 100 in error state").isEqualTo(100);
            assertThat(r.err()).isEqualTo("rsmap-hook: job 7 belongs to alice, not to mallory\n");
            assertThat(ran).doesNotExist();
        }
    }

    @Test
    void starter_rsmapdUnreachable_reschedulesWithoutRunningTheJob() throws Exception {
        Path ran = tmp.resolve("ran");
        Run r = run(starter("touch", ran.toString()), starterEnv(tmp.resolve("nobody-listens.sock")));
        assertThat(r.code()).as("execd reschedules a job that exits 99").isEqualTo(99);
        assertThat(r.err()).isEqualTo("rsmap-hook: cannot reach rsmapd at " + tmp.resolve("nobody-listens.sock")
                + ": No such file or directory\n");
        assertThat(ran).doesNotExist();
    }

    @Test
    void starter_rsmapdHangsUpMidAnswer_reschedules() throws Exception {
        Path sock = tmp.resolve("fake.sock");
        Path ran = tmp.resolve("ran");
        // a STATE event and then the connection ends, without OK or ERROR
        try (FakeDaemon fake = new FakeDaemon(sock, c -> List.of(Frame.of(c.tid(), Code.STATE.value(), "{}",
                "SGE_HGR_gpu=0")))) {
            Run r = run(starter("touch", ran.toString()), starterEnv(sock));
            assertThat(r.code()).isEqualTo(99);
            assertThat(r.err()).isEqualTo("rsmap-hook: lost rsmapd during JOB_ENTER\n");
            assertThat(ran).doesNotExist();
        }
    }

    /** rsmapd as it answers JOB_ENTER of a job that holds nothing here: no SGE_HGR_ lines. */
    private FakeDaemon grantingNothing(Path sock) throws Exception {
        FakeDaemon fake = new FakeDaemon(sock, c -> FakeDaemon.granting(c, "{\"job\":\"7\",\"grants\":{}}"));
        Files.setPosixFilePermissions(sock, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
        return fake;
    }

    @Test
    void starter_withoutRequest_entersTheJobAnyway_andDropsEverySgeHgr() throws Exception {
        Path sock = tmp.resolve("fake.sock");
        try (FakeDaemon fake = grantingNothing(sock)) {
            Map<String, String> env = starterEnv(sock);
            env.remove("RSMAP_REQUEST");
            Run r = run(starter("env"), env);
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(hgrAndKeep(r.out())).containsExactly("KEEP=me");
            assertThat(fake.received).extracting(f -> f.code() + " " + f.text(0))
                    .containsExactly(Code.JOB_ENTER.value() + " {\"job\":\"7\",\"task\":\"undefined\"}");
        }
    }

    @Test
    void starter_underItsLinkName_takesTheJobFromItsArguments_alsoAsALoginShell() throws Exception {
        // installed as /usr/libexec/rsmap/rsmap-starter -> rsmap-hook (docs/integration-ocs.md)
        Files.copy(ExecdCell.HOOK, tmp.resolve("rsmap-hook"));
        Path link = Files.createSymbolicLink(tmp.resolve("rsmap-starter"), Path.of("rsmap-hook"));
        Path sock = tmp.resolve("fake.sock");
        try (FakeDaemon fake = grantingNothing(sock)) {
            Map<String, String> env = starterEnv(sock);
            env.remove("RSMAP_REQUEST");
            Run r = run(List.of(link.toString(), "env"), env);
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(hgrAndKeep(r.out())).containsExactly("KEEP=me");
            // execd starts a starter_method as argv[0] "-rsmap-starter" where the job wants a login shell
            Run login = run(List.of("bash", "-c", "exec -a -rsmap-starter " + link + " echo hello"), env);
            assertThat(login.out()).isEqualTo("hello\n");
        }
    }

    @Test
    void starter_posixCompliantScript_runsUnderTheJobsShell_binaryAsGiven() throws Exception {
        try (FakeDaemon fake = grantingNothing(tmp.resolve("fake.sock"))) {
            posixCompliantScript(starterEnv(tmp.resolve("fake.sock")));
        }
    }

    private void posixCompliantScript(Map<String, String> env) throws Exception {
        env.remove("RSMAP_REQUEST");
        env.putAll(Map.of("SGE_STARTER_SHELL_PATH", "/bin/bash", "SGE_STARTER_SHELL_START_MODE", "posix_compliant"));
        Path spool = Path.of(env.get("SGE_JOB_SPOOL_DIR"));
        Path script = Files.writeString(tmp.resolve("job.sh"), "echo \"bash=${BASH_VERSION:+yes} $0 $1\"\n");
        Files.writeString(spool.resolve("config"), "job_id=7\nhandle_as_binary=0\n");
        Run r = run(starter(script.toString(), "arg"), env);
        assertThat(r.out()).as(r.err()).isEqualTo("bash=yes " + script + " arg\n");
        Files.writeString(spool.resolve("config"), "job_id=7\nhandle_as_binary=1\n");
        assertThat(run(starter("echo", "binary"), env).out()).isEqualTo("binary\n");
        env.put("SGE_STARTER_SHELL_START_MODE", "unix_behavior");
        Files.writeString(spool.resolve("config"), "job_id=7\nhandle_as_binary=0\n");
        assertThat(run(starter("echo", "as-is"), env).out()).isEqualTo("as-is\n");
    }

    @Test
    void starter_commandMissing_exits127WithTheReason() throws Exception {
        try (FakeDaemon fake = grantingNothing(tmp.resolve("fake.sock"))) {
            Map<String, String> env = starterEnv(tmp.resolve("fake.sock"));
            env.remove("RSMAP_REQUEST");
            Run r = run(starter("/no/such/job"), env);
            assertThat(r.code()).isEqualTo(127);
            assertThat(r.err()).isEqualTo("rsmap-hook: cannot exec /no/such/job: No such file or directory\n");
        }
    }

    @Test
    void starter_installedSetgid_dropsTheGroupBeforeTheJobRuns() throws Exception {
        String user = ExecdCell.jobUser();
        Path dir = Files.createDirectories(tmp.resolve("libexec"));
        Path starter = Files.copy(ExecdCell.HOOK, dir.resolve("rsmap-hook"));
        // as packaging installs it: group "daemon" stands for rsmap here, mode 2755
        ExecdCell.sh("chgrp daemon " + starter + " && chmod 2755 " + starter + " && chmod 755 " + tmp);
        Path sock = tmp.resolve("fake.sock");
        Map<String, String> env = new java.util.HashMap<>(Map.of("JOB_ID", "1", "RSMAP_SOCKET", sock.toString()));
        String own = ExecdCell.sh("id -g " + user).strip();
        Run r;
        try (FakeDaemon fake = grantingNothing(sock)) {
            r = run(List.of("setpriv", "--reuid=" + user, "--regid=" + own, "--init-groups", starter.toString(),
                    "starter", "grep", "^Gid:", "/proc/self/status"), env);
        }
        assertThat(r.code()).as(r.err()).isZero();
        String[] gids = r.out().strip().split("\\s+");
        assertThat(gids).as("real, effective, saved, filesystem group").containsExactly("Gid:", own, own, own, own);
    }
}
