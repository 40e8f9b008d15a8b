// Jobs started through the execd stand-in against a real rsmapd and the real C hook: what each job saw,
// as which user, and what the daemon holds afterwards (the daemon and its protocol "Done when"). The hook is configured as in
// docs/integration-ocs.md: prolog and epilog as root@, the starter_method a link named rsmap-starter.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.daemon.ExecdCell.jobUser;
import static rsmap.daemon.ExecdCell.sh;
import static rsmap.daemon.ExecdCell.waitFor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import rsmap.daemon.config.Config;
import rsmap.wire.Polls;

class ExecdStubIT {
    /** The hook, its starter link, the daemon's socket and the jobs' tmpdir, all reachable by a job's owner. */
    ExecdCell cell;
    Path shared;
    Path hook;
    Path starter;
    Config config;
    Daemon daemon;

    @BeforeEach
    void start() throws Exception {
        cell = ExecdCell.open("rsmap-execd");
        shared = cell.dir();
        hook = shared.resolve("rsmap-hook");
        starter = shared.resolve("rsmap-starter");
        // The starter runs as the job's owner: it must be able to connect (docs/integration-ocs.md, "Socket").
        config = TestDaemon.config(shared, "gpu=4(0 0 1 1)", "socket_mode = 0666");
        daemon = TestDaemon.start(config);
    }

    @AfterEach
    void stop() throws Exception {
        daemon.close();
        cell.close();
    }

    /** A job through execd-stub with the hooks; {@code options} go before "--", the job is {@code sh -c shell}. */
    private Process job(String id, String request, String shell, List<String> options, String... extraEnv)
            throws IOException {
        return cell.stub(id).options(options).socket(config.socket()).request(request).environment(extraEnv).sh(shell);
    }

    private Process job(String id, String request, String shell, String... extraEnv) throws IOException {
        return job(id, request, shell, List.of(), extraEnv);
    }

    private static String finish(Process p) throws Exception {
        return ExecdCell.finish(p, 30);
    }

    // --- needs the daemon's JOB_ENTER -----------------------------------------------------------------

    @Test
    void twoJobsSharingACard_seeTheSameIdentifier_andEverythingIsGivenBack() throws Exception {
        Path go = shared.resolve("go");
        Process first = job("1", "gpu=1", "echo \"first=$SGE_HGR_gpu\"; " + waitFor(go));
        Polls.until("job 1 holds its card", () -> !daemon.cluster().runningJobs().isEmpty() || !first.isAlive());
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
        Polls.until("job 12 holds its card", () -> !daemon.cluster().runningJobs().isEmpty() || !master.isAlive());
        // qrsh -inherit under Son of Grid Engine 8.1's builtin rsh: no prolog; the starter gets the task's
        // command line as one argument and no shell, and runs it with the owner's shell -c.
        String slave = finish(cell.stub("12").options("--pe", "mpi", "--slots", "2", "--pe-task", "1")
                .socket(config.socket()).request("gpu=1")
                .start("echo", "slave=$SGE_HGR_gpu", "mode=$SGE_STARTER_SHELL_START_MODE", "dir=$SGE_JOB_SPOOL_DIR"));
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
            Process task = cell.stub("13").host("node02").noPrologOrEpilog()
                    .options("--pe", "mpi", "--slots", "2", "--pe-task", "1").socket(otherConfig.socket())
                    .request("gpu=1").env("SGE_HGR_gpu", "0").start("echo", "slave=[$SGE_HGR_gpu]");
            assertThat(finish(task)).isEqualTo("slave=[]\nexit=0");
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
}
