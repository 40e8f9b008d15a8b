// A parallel job over two hosts through the execd stand-in, one rsmapd each (own socket, own state
// directory): the slave host grants a pe task at its first JOB_ENTER from the request execd spooled, with
// JOB_START's refusals, and gives it back once execd removed the job's directory there
// (docs/integration-ocs.md, "Parallel jobs: what each task gets"). A real Grid Engine cannot run two
// execds on one machine (one execd port per cell), so the two hosts are two spool trees of the stand-in.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import rsmap.daemon.config.Config;
import rsmap.wire.Polls;

class SlaveHostIT {
    /** Both hosts' spool trees, their daemons' folders, the hooks and the jobs' tmpdir. */
    ExecdCell cell;
    Path shared;
    Config master;
    Config slave;
    Daemon masterDaemon;
    Daemon slaveDaemon;

    @BeforeEach
    void start() throws Exception {
        cell = ExecdCell.open("rsmap-slave");
        shared = cell.dir();
        Files.createDirectories(spool("node01").resolve("active_jobs"));
        Files.createDirectories(spool("node02").resolve("active_jobs"));
        master = TestDaemon.config(shared.resolve("node01-rsmapd"), "gpu=4(0 0 1 1)", "socket_mode = 0666",
                "execd_spool = " + spool("node01"));
        slave = TestDaemon.config(shared.resolve("node02-rsmapd"), "gpu=4(0 0 1 1)", "socket_mode = 0666",
                "execd_spool = " + spool("node02"), "host = node02", "reconcile_interval = 0");
        masterDaemon = TestDaemon.start(master);
        slaveDaemon = TestDaemon.start(slave);
    }

    @AfterEach
    void stop() throws Exception {
        slaveDaemon.close();
        masterDaemon.close();
        cell.close();
    }

    Path spool(String host) {
        return shared.resolve("spool").resolve(host);
    }

    /**
     * A pe task {@code task} of {@code job} on node02 through the stand-in, no prolog there, on the slave's rsmapd;
     * with {@code starter} its starter enters it.
     */
    private Process peTask(String job, String task, String request, boolean starter, List<String> options,
                           String... command) throws Exception {
        StubJob stub = cell.stub(job).host("node02");
        stub = starter ? stub.noPrologOrEpilog() : stub.noHooks();
        return stub.options("--pe", "mpi", "--slots", "1", "--pe-task", task).options(options).socket(slave.socket())
                .request(request).env("SGE_HGR_gpu", "evil").start(command);
    }

    private Process peTask(String job, String task, String request, String... command) throws Exception {
        return peTask(job, task, request, true, List.of(), command);
    }

    private static String finish(Process p) throws Exception {
        return ExecdCell.finish(p, 30);
    }

    @Test
    void aPeTaskOnASlaveHost_isGrantedThereFromTheSpooledRequest_andReleasedWhenExecdRemovesTheJob() throws Exception {
        // The master task on node01: its prolog's JOB_START grants there.
        Path go = shared.resolve("go");
        Process masterTask = cell.stub("21").options("--pe", "mpi", "--slots", "1").socket(master.socket())
                .request("gpu=2[same=id]").sh("echo master=$SGE_HGR_gpu; " + ExecdCell.waitFor(go));
        Polls.until("the master task holds its cards",
                () -> !masterDaemon.cluster().runningJobs().isEmpty() || !masterTask.isAlive());
        // The slave task on node02: no prolog ran there; the job's directory stays after the task (--keep
        // stands for the job still running on the host).
        String task = finish(peTask("21", "1", "gpu=2[same=id]", true, List.of("--keep"), "echo", "slave=$SGE_HGR_gpu"));
        assertThat(task).isEqualTo("slave=0 0\nexit=0");
        assertThat(slaveDaemon.cluster().runningJobs()).as("node02 holds the job while execd keeps its directory")
                .containsExactly("21");
        // A second task of the job there joins the same grant.
        assertThat(finish(peTask("21", "2", "gpu=2[same=id]", "echo", "second=$SGE_HGR_gpu"))).isEqualTo("second=0 0\nexit=0");
        slaveDaemon.reconcile();
        assertThat(slaveDaemon.cluster().runningJobs()).containsExactly("21");
        // The job ends on node02: execd removes its directory; the next reconciliation gives the grant back.
        Trees.delete(spool("node02").resolve("active_jobs/21.1"));
        slaveDaemon.reconcile();
        assertThat(slaveDaemon.cluster().runningJobs()).isEmpty();
        assertThat(Files.readString(slave.stateDir().resolve("journal"))).as("journaled like a JOB_START")
                .contains("21").contains("reconciled");
        Files.writeString(go, "");
        assertThat(finish(masterTask)).contains("master=0 0\n").endsWith("exit=0");
        assertThat(masterDaemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void aSlaveTaskWhoseRequestIsRefused_doesNotRun_exit100_andOneThatCannotBeServedNow_exit99() throws Exception {
        String bad = finish(peTask("22", "1", "gpu=1[colour=red]", "echo", "task-ran"));
        assertThat(bad).doesNotContain("task-ran")
                .contains("rsmap-hook: job 22: pe task on a host where its prolog did not run, request 'gpu=1[colour=red]' from "
                        + spool("node02").resolve("active_jobs/22.1/1.node02/environment") + ": request: ")
                .endsWith("exit=100");
        String busy = finish(peTask("23", "1", "gpu=8", "echo", "task-ran"));
        assertThat(busy).doesNotContain("task-ran").contains("cannot be granted now").endsWith("exit=99");
        assertThat(slaveDaemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void aTaskWhoseSpoolIsNotRoots_orWhoseTasksDisagree_isRefused_andNothingIsGranted() throws Exception {
        // Task 1 of job 24 left by execd, its environment file then handed to someone else.
        finish(peTask("24", "1", "gpu=1", false, List.of("--keep"), "true"));
        Path env = spool("node02").resolve("active_jobs/24.1/1.node02/environment");
        // As the real execd leaves a pe task on a host that is not the job's master: the task's directory only,
        // its config naming it, no pe_hostfile (GridEngineIT shows the same on both releases).
        try (Stream<Path> job = Files.list(spool("node02").resolve("active_jobs/24.1"));
             Stream<Path> task = Files.list(env.getParent())) {
            assertThat(job.map(p -> p.getFileName().toString())).containsExactly("1.node02");
            assertThat(task.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("config", "environment");
        }
        assertThat(Files.readAllLines(env.resolveSibling("config"))).contains("pe_task_id=1.node02", "host_slots=1");
        String user = ExecdCell.jobUser();
        ExecdCell.sh("chown " + user + " " + env);
        assertThat(finish(peTask("24", "2", "gpu=1", "echo", "task-ran"))).doesNotContain("task-ran")
                .contains(env + " belongs to '" + user + "', not root: not execd's spool").endsWith("exit=100");
        // Task 1 of job 25 asked gpu=1; a later task's qrsh -inherit -v RSMAP_REQUEST=gpu=2 asks more.
        finish(peTask("25", "1", "gpu=1", false, List.of("--keep"), "true"));
        assertThat(finish(peTask("25", "2", "gpu=2", "echo", "task-ran"))).doesNotContain("task-ran")
                .contains("its pe tasks here disagree").endsWith("exit=100");
        assertThat(slaveDaemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void aPeTaskWhoseConfigSaysHostSlots0_asOpenClusterScheduler91Writes_isGranted() throws Exception {
        finish(peTask("28", "1", "gpu=1", false, List.of("--keep"), "true"));
        Path config = spool("node02").resolve("active_jobs/28.1/1.node02/config");
        Files.writeString(config, Files.readString(config).replace("host_slots=1", "host_slots=0"));
        assertThat(finish(peTask("28", "2", "gpu=1", "echo", "once=$SGE_HGR_gpu"))).isEqualTo("once=0\nexit=0");
    }

    @Test
    void onTheMasterHost_aPeTaskIsNeverGrantedFromTheSpool_onlyTheProlog() throws Exception {
        // Job 26's own files on node02 (its master task ran there without a prolog): the task enters bare.
        Process own = cell.stub("26").host("node02").noHooks().options("--pe", "mpi", "--slots", "1", "--keep")
                .request("gpu=1").start("true");
        assertThat(finish(own)).isEqualTo("exit=0");
        assertThat(finish(peTask("26", "1", "gpu=1", "echo", "slave=[$SGE_HGR_gpu]"))).isEqualTo("slave=[]\nexit=0");
        assertThat(slaveDaemon.cluster().runningJobs()).isEmpty();
    }
}
