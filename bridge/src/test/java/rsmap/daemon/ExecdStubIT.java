// Jobs started through the execd stand-in against a real rsmapd and the real C hook: what each job saw,
// as which user, and what the daemon holds afterwards (the daemon and its protocol "Done when"). The hook is configured as in
// docs/integration-ocs.md: prolog and epilog as root@, the starter_method a link named rsmap-starter.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
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
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ExecdStubIT {
    static final Path STUB = Path.of("..", "native-stubs", "target", "execd-stub").toAbsolutePath().normalize();
    static final Path HOOK = Path.of("target", "rsmap-hook").toAbsolutePath();

    /**
     * Everything a job's owner must reach - the hook, the daemon's socket, the job's tmpdir - lives here,
     * under /tmp with mode 0755: a JUnit temporary directory is 0700, and a clone may live under /root.
     */
    Path shared;
    Path hook;
    Path starter;
    Config config;
    Daemon daemon;

    @BeforeEach
    void start() throws Exception {
        assertThat(STUB).as("built by the native-stubs module").isExecutable();
        shared = Files.createTempDirectory("rsmap-execd", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        hook = Files.copy(HOOK, shared.resolve("rsmap-hook"));
        starter = Files.createSymbolicLink(shared.resolve("rsmap-starter"), Path.of("rsmap-hook"));
        // The starter runs as the job's owner: it must be able to connect (docs/integration-ocs.md, "Socket").
        config = TestDaemon.config(shared, "gpu=4(0 0 1 1)", "socket_mode = 0666");
        daemon = TestDaemon.start(config);
    }

    @AfterEach
    void stop() throws Exception {
        daemon.close();
        try (Stream<Path> all = Files.walk(shared)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /** A job through execd-stub with the hooks; {@code options} go before "--", the job is {@code sh -c shell}. */
    private Process job(String id, String request, String shell, List<String> options, String... extraEnv)
            throws IOException {
        List<String> cmd = new ArrayList<>(List.of(STUB.toString(), "--spool", shared.resolve("spool").toString(),
                "--host", "node01", "--job", id, "--cwd", "/", "--tmpdir", shared.toString(),
                "--prolog", "root@" + hook + " prolog", "--starter", starter.toString(),
                "--epilog", "root@" + hook + " epilog"));
        cmd.addAll(options);
        cmd.addAll(List.of("--", "sh", "-c", shell));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("RSMAP_SOCKET", config.socket().toString());
        if (request != null) {
            pb.environment().put("RSMAP_REQUEST", request);
        }
        for (String kv : extraEnv) {
            pb.environment().put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        return pb.start();
    }

    private Process job(String id, String request, String shell, String... extraEnv) throws IOException {
        return job(id, request, shell, List.of(), extraEnv);
    }

    private static String finish(Process p) throws Exception {
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8) + "exit=" + p.exitValue();
    }

    // --- needs the daemon's JOB_ENTER -----------------------------------------------------------------

    @Test
    void twoJobsSharingACard_seeTheSameIdentifier_andEverythingIsGivenBack() throws Exception {
        Path go = shared.resolve("go");
        Process first = job("1", "gpu=1", "echo \"first=$SGE_HGR_gpu\"; " + waitFor(go));
        for (int i = 0; i < 200 && daemon.cluster().runningJobs().isEmpty() && first.isAlive(); i++) {
            Thread.sleep(50);
        }
        String second = finish(job("2", "gpu=1", "echo \"second=$SGE_HGR_gpu\""));
        Files.writeString(go, "");
        // Grid Engine's RSMAP manual: shares of one card; the policy puts a single share onto the partly used card
        assertThat(finish(first)).contains("first=0\n").endsWith("exit=0");
        assertThat(second).contains("second=0\n").endsWith("exit=0");
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void aJobBringingItsOwnSgeHgr_seesOnlyItsGrant() throws Exception {
        String r = finish(job("3", "gpu=2[same=id]", "env | grep '^SGE_HGR_' | sort", "SGE_HGR_gpu=evil",
                "SGE_HGR_nic=ib9"));
        assertThat(r).isEqualTo("SGE_HGR_gpu=0 0\nexit=0");
    }

    @Test
    void aJobOfAnotherUser_runsAsThatUser_withItsGrant() throws Exception {
        String user = jobUser();
        String r = finish(job("4", "gpu=1", "id -un; echo \"$SGE_HGR_gpu\"", List.of("--user", user)));
        assertThat(r).isEqualTo(user + "\n0\nexit=0");
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void aStarterRunningAsSomeoneElseThanTheOwner_isRefused_andTheJobDoesNotRun() throws Exception {
        String user = jobUser();
        // The prolog reports another owner than the one the starter (and the job) runs as.
        List<String> options = List.of("--user", user, "--prolog", "root@/usr/bin/env USER=rsmap-other " + hook + " prolog");
        String r = finish(job("5", "gpu=1", "echo job-ran", options));
        assertThat(r).doesNotContain("job-ran").contains("rsmap-hook: job 5 belongs to 'rsmap-other', not '" + user + "'\n")
                .contains("execd-stub: the job exited 100: execd puts it in error state").endsWith("exit=100");
        assertThat(daemon.cluster().runningJobs()).as("the epilog gave the grant back").isEmpty();
    }

    // --- the stand-in itself, and what does not need JOB_ENTER ------------------------------------------

    @Test
    void aJobThatCannotBeServed_isRescheduled_andOneWithABadRequestGoesToError() throws Exception {
        assertThat(finish(job("6", "gpu=8", "echo job-ran"))).contains("prolog asked to reschedule").doesNotContain("job-ran")
                .endsWith("exit=99");
        assertThat(finish(job("7", "gpu=1[scope=job]", "true")))
                .contains("rsmap-hook: request: column 7: scope= needs same=").endsWith("exit=100");
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void aPeTaskOfARunningJob_isEnteredByTheStarter_withTheJobsGrant() throws Exception {
        Path go = shared.resolve("go-pe");
        Process master = job("12", "gpu=1", "echo master=$SGE_HGR_gpu; " + waitFor(go),
                List.of("--pe", "mpi", "--slots", "2"));
        for (int i = 0; i < 200 && daemon.cluster().runningJobs().isEmpty() && master.isAlive(); i++) {
            Thread.sleep(50);
        }
        // qrsh -inherit under Son of Grid Engine 8.1's builtin rsh: no prolog; the starter gets the task's
        // command line as one argument and no shell, and runs it with the owner's shell -c.
        ProcessBuilder pb = new ProcessBuilder(STUB.toString(), "--spool", shared.resolve("spool").toString(), "--host",
                "node01", "--job", "12", "--pe", "mpi", "--slots", "2", "--pe-task", "1", "--cwd", "/", "--tmpdir",
                shared.toString(), "--prolog", "root@" + hook + " prolog", "--starter", starter.toString(), "--epilog",
                "root@" + hook + " epilog", "--", "echo", "slave=$SGE_HGR_gpu", "mode=$SGE_STARTER_SHELL_START_MODE",
                "dir=$SGE_JOB_SPOOL_DIR").redirectErrorStream(true);
        pb.environment().put("RSMAP_SOCKET", config.socket().toString());
        pb.environment().put("RSMAP_REQUEST", "gpu=1");
        String slave = finish(pb.start());
        Files.writeString(go, "");
        assertThat(slave).isEqualTo("slave=0 mode=unix_behavior dir=" + shared.resolve("spool/node01/active_jobs/12.1/1.node01")
                + "\nexit=0");
        assertThat(finish(master)).contains("master=0\n").endsWith("exit=0");
        assertThat(daemon.cluster().runningJobs()).as("the pe task ran no epilog; the master's gave the grant back").isEmpty();
    }

    @Test
    void aPeTaskOnAHostWhereNoPrologRan_runsWithNoDevicesAndNoSgeHgr() throws Exception {
        // Another host's rsmapd: the job's prolog ran elsewhere, so this one holds nothing for job 13.
        Path other = Files.createDirectory(shared.resolve("other"));
        Config otherConfig = TestDaemon.config(other, "gpu=4(0 0 1 1)", "socket_mode = 0666");
        try (Daemon ignored = TestDaemon.start(otherConfig)) {
            ProcessBuilder pb = new ProcessBuilder(STUB.toString(), "--spool", shared.resolve("spool").toString(), "--host",
                    "node02", "--job", "13", "--pe", "mpi", "--slots", "2", "--pe-task", "1", "--cwd", "/", "--tmpdir",
                    shared.toString(), "--starter", starter.toString(), "--", "echo", "slave=[$SGE_HGR_gpu]")
                    .redirectErrorStream(true);
            pb.environment().put("RSMAP_SOCKET", otherConfig.socket().toString());
            pb.environment().put("RSMAP_REQUEST", "gpu=1");
            pb.environment().put("SGE_HGR_gpu", "0");
            assertThat(finish(pb.start())).isEqualTo("slave=[]\nexit=0");
        }
    }

    @Test
    void aJobRunAsAnotherUser_getsThatUsersIdentityAndEnvironment_noMapRequested() throws Exception {
        String user = jobUser();
        String uid = sh("id -u " + user).strip();
        String home = sh("getent passwd " + user + " | cut -d: -f6").strip();
        String r = finish(job("8", null, "id -u; echo \"$USER $LOGNAME $HOME\"; env | grep -c '^SGE_HGR_'",
                List.of("--user", user), "SGE_HGR_gpu=evil"));
        assertThat(r).isEqualTo(uid + "\n" + user + " " + user + " " + home + "\n0\nexit=1"); // grep -c 0 exits 1
    }

    @Test
    void theSpoolDirectory_isLaidOutAsExecdDoes() throws Exception {
        String r = finish(job("9", null, "echo \"$SGE_JOB_SPOOL_DIR $TMPDIR\"", List.of("--task", "3", "--pe", "mpi",
                "--slots", "2", "--keep")));
        Path dir = shared.resolve("spool/node01/active_jobs/9.3");
        Path tmpdir = shared.resolve("9.3.all.q");
        assertThat(r).isEqualTo(dir + " " + tmpdir + "\nexit=0");
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("config", "environment",
                    "pe_hostfile");
        }
        List<String> env = Files.readAllLines(dir.resolve("environment"));
        assertThat(env).contains("JOB_ID=9", "SGE_TASK_ID=3", "SGE_TASK_FIRST=3", "SGE_TASK_LAST=3",
                "SGE_TASK_STEPSIZE=1", "NSLOTS=2", "NHOSTS=1", "PE=mpi", "PE_HOSTFILE=" + dir.resolve("pe_hostfile"),
                "TMPDIR=" + tmpdir, "SGE_JOB_SPOOL_DIR=" + dir, "RSMAP_SOCKET=" + config.socket());
        // the user's environment first, then what execd adds, the SGE_ ones last
        assertThat(env.indexOf("RSMAP_SOCKET=" + config.socket())).isLessThan(env.indexOf("JOB_ID=9"));
        assertThat(env.get(env.size() - 1)).isEqualTo("SGE_JOB_SPOOL_DIR=" + dir);
        assertThat(Files.readString(dir.resolve("pe_hostfile"))).isEqualTo("node01 2 all.q@node01 UNDEFINED\n");
        assertThat(Files.readAllLines(dir.resolve("config"))).contains("job_id=9", "ja_task_id=3",
                "starter_method=" + starter, "prolog=root@" + hook + " prolog", "pe=mpi");

        finish(job("10", null, "true"));
        List<String> plain = Files.readAllLines(shared.resolve("spool/node01/active_jobs/9.3/environment"));
        assertThat(plain).isNotEmpty(); // kept
        assertThat(shared.resolve("spool/node01/active_jobs/10.1")).as("removed without --keep").doesNotExist();
    }

    @Test
    void aNonArrayJob_hasUndefinedTaskVariables_andSpoolsAsTask1() throws Exception {
        finish(job("11", null, "true", List.of("--keep")));
        assertThat(Files.readAllLines(shared.resolve("spool/node01/active_jobs/11.1/environment"))).contains(
                "SGE_TASK_ID=undefined", "SGE_TASK_FIRST=undefined", "SGE_TASK_LAST=undefined",
                "SGE_TASK_STEPSIZE=undefined");
    }

    /**
     * A job's wait for {@code file}, bounded to 10 minutes (longer than any test here waits): a test run
     * killed midway, which never creates the file, leaves no job looping behind it.
     */
    static String waitFor(java.nio.file.Path file) {
        return "i=0; while [ ! -e " + file + " ] && [ $i -lt 12000 ]; do sleep 0.05; i=$((i+1)); done";
    }

    /**
     * The user a job runs as: nobody, or one created here. Needs root (execd's shepherd switches users as
     * root); outside CI a non-root run skips with that reason, under CI=true it fails.
     */
    static String jobUser() throws Exception {
        if (!sh("id -u").strip().equals("0")) {
            String why = "switching to the job's owner needs root, as sge_execd does";
            if ("true".equals(System.getenv("CI"))) {
                fail(why);
            }
            Assumptions.abort(why);
        }
        if (sh("id -u nobody 2>/dev/null").isBlank()) {
            sh("id -u rsmap-job >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/sh rsmap-job");
            return "rsmap-job";
        }
        return "nobody";
    }

    static String sh(String command) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", command).redirectErrorStream(true).start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
}
