// resource maps for real Slurm jobs, end to end - munged, slurmctld, slurmd with the SPANK
// plugin, rsmapd with the cgroup v1 device backend; jobs through real srun and sbatch, run as nobody.
package rsmap.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import rsmap.slurm.SlurmCluster.Run;
import rsmap.wire.Polls;

class SlurmIT extends OneSlurmCluster {
    /** The task's view: its job id, its SGE_HGR_* variables, its devices cgroup, and both fake GPUs. */
    private static final String SHOW = "echo JOB=$SLURM_JOB_ID; env | grep ^SGE_HGR_ | sort; "
            + "grep :devices: /proc/self/cgroup; for d in \"$@\"; do cat \"$d\" 2>&1 | sed 's/^/OPEN /'; done";

    private Run srun(Map<String, String> env, String... args) throws Exception {
        String[] cmd = new String[args.length + 3];
        cmd[0] = "srun";
        cmd[1] = "-D";
        cmd[2] = cluster.work.toString();
        System.arraycopy(args, 0, cmd, 3, args.length);
        return cluster.asNobody(env, cmd);
    }

    private Run show(Map<String, String> env, String rsmap) throws Exception {
        Run r = rsmap == null
                ? srun(env, "sh", "-c", SHOW, "show", cluster.device(0).toString(), cluster.device(1).toString())
                : srun(env, "--rsmap=" + rsmap, "sh", "-c", SHOW, "show", cluster.device(0).toString(),
                        cluster.device(1).toString());
        assertThat(r.code()).as("%s\n%s", r, "").isZero();
        return r;
    }

    @Test
    @Order(1)
    void malformedRsmap_isRefusedAtSubmission_withTheReason_andNothingIsQueued() throws Exception {
        Run s = srun(Map.of(), "--rsmap=gpu=1[scope=job]", "true");
        assertThat(s.code()).isNotZero();
        assertThat(s.err()).contains("--rsmap: column 7: scope= needs same=");
        Run b = cluster.asNobody(Map.of(), "sbatch", "-D", cluster.work.toString(), "--rsmap=gpu=2[same=id",
                "--wrap", "true");
        assertThat(b.code()).isNotZero();
        assertThat(b.err()).contains("--rsmap: column 6: '[' without a matching ']'");
        assertThat(b.out()).doesNotContain("Submitted");
        assertThat(cluster.run(List.of("squeue", "-h"), Map.of()).out()).as("no job was queued").isBlank();
    }

    @Test
    @Order(2)
    void twoJobsSharingACardBySameId_seeTheSameIdentifier() throws Exception {
        Path seen = cluster.work.resolve("a.env");
        Path go = cluster.work.resolve("go");
        Run a = cluster.asNobody(Map.of(), "sbatch", "--parsable", "-D", cluster.work.toString(), "-o",
                cluster.work.resolve("a.out").toString(), "--rsmap=gpu=2[same=id]", "--wrap",
                "env | grep ^SGE_HGR_ > " + seen + ".tmp; mv " + seen + ".tmp " + seen + "; "
                        + "i=0; while [ ! -e " + go + " ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done");
        assertThat(a.code()).as(a.toString()).isZero();
        String jobA = a.out().strip();
        Polls.await(Duration.ofSeconds(30), () -> Files.exists(seen));
        assertThat(seen).as("job A started\n" + cluster.logs()).exists();
        try {
            Run b = show(Map.of(), "gpu=2[same=id]");
            String jobB = b.lines("JOB=").get(0).substring(4);
            assertThat(Files.readAllLines(seen)).containsExactly("SGE_HGR_gpu=gpu0 gpu0");
            assertThat(b.lines("SGE_HGR_")).containsExactly("SGE_HGR_gpu=gpu0 gpu0");
            assertThat(jobB).isNotEqualTo(jobA);
            assertThat(cluster.held()).as("job B was granted while job A held its shares").containsKey(jobA);
        } finally {
            Files.writeString(go, "");
        }
        assertThat(cluster.awaitReleased(jobA)).doesNotContainKey(jobA);
    }

    @Test
    @Order(3)
    void aJobWhileAnotherHoldsTheCard_isHeldBothWaysByRsmapd() throws Exception {
        Path go = cluster.work.resolve("go2");
        Run a = cluster.asNobody(Map.of(), "sbatch", "--parsable", "-D", cluster.work.toString(), "-o", "/dev/null",
                "--rsmap=gpu=2[same=id]", "--wrap",
                "i=0; while [ ! -e " + go + " ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done");
        String jobA = a.out().strip();
        try {
            Polls.await(Duration.ofSeconds(30), () -> cluster.held().containsKey(jobA));
            Run b = cluster.asNobody(Map.of(), "sbatch", "--parsable", "-D", cluster.work.toString(), "-o", "/dev/null",
                    "--rsmap=gpu=2[same=id]", "--wrap",
                    "i=0; while [ ! -e " + go + " ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done");
            String jobB = b.out().strip();
            Polls.await(Duration.ofSeconds(30), () -> cluster.held().containsKey(jobB));
            assertThat(cluster.held()).as("one card, two jobs, at once").containsEntry(jobA, List.of("gpu0", "gpu0"))
                    .containsEntry(jobB, List.of("gpu0", "gpu0"));
        } finally {
            Files.writeString(go, "");
        }
    }

    @Test
    @Order(4)
    void aJobAskingForACharacteristic_getsTheMatchingInstance() throws Exception {
        assertThat(show(Map.of(), "gpu=1[model=H100]").lines("SGE_HGR_")).containsExactly("SGE_HGR_gpu=gpu1");
        assertThat(show(Map.of(), "gpu=1[model=A100]").lines("SGE_HGR_")).containsExactly("SGE_HGR_gpu=gpu0");
    }

    @Test
    @Order(5)
    void aJobGrantedGpu0_opensItsDevice_andIsDeniedGpu1s() throws Exception {
        Run r = show(Map.of(), "gpu=1[id=gpu0]");
        String job = r.lines("JOB=").get(0).substring(4);
        assertThat(r.out()).contains(":devices:/rsmap/" + job + "\n");
        assertThat(r.lines("OPEN ")).containsExactly(
                "OPEN cat: " + cluster.device(0) + ": No such device or address", // ENXIO: allowed, no driver
                "OPEN cat: " + cluster.device(1) + ": Operation not permitted"); // EPERM: the devices cgroup
    }

    @Test
    @Order(6)
    void aJobThatBroughtSgeHgrVariables_seesOnlyItsGrant() throws Exception {
        Map<String, String> brought = Map.of("SGE_HGR_gpu", "evil", "SGE_HGR_nic", "forged");
        assertThat(show(brought, "gpu=1").lines("SGE_HGR_")).containsExactly("SGE_HGR_gpu=gpu0");
        Run plain = show(brought, null);
        assertThat(plain.lines("SGE_HGR_")).as("a job without --rsmap has none").isEmpty();
        assertThat(plain.lines("OPEN ")).as("and no device policy").containsExactly(
                "OPEN cat: " + cluster.device(0) + ": No such device or address",
                "OPEN cat: " + cluster.device(1) + ": No such device or address");
    }

    @Test
    @Order(7)
    void aRequestNoInstanceCanMeet_failsTheJobWithTheReason_notTheNode() throws Exception {
        Run r = srun(Map.of(), "--rsmap=gpu=1[model=V100]", "true");
        assertThat(r.code()).isNotZero();
        assertThat(r.err()).contains("cannot be granted now: gpu: needs 1 free matching instance");
        Run unknown = srun(Map.of(), "--rsmap=fpga=1", "true");
        assertThat(unknown.code()).isNotZero();
        assertThat(unknown.err()).contains("request: column 1: unknown complex 'fpga'");
        Polls.await(Duration.ofSeconds(10), () -> {
            String state = cluster.run(List.of("sinfo", "-h", "-o", "%T"), Map.of()).out().strip();
            assertThat(state).as("the node is never drained for a job's request").doesNotContain("drain");
            return state.equals("idle");
        });
    }

    @Test
    @Order(8)
    void aCancelledJob_givesItsGrantBack() throws Exception {
        Path started = cluster.work.resolve("started");
        Run a = cluster.asNobody(Map.of(), "sbatch", "--parsable", "-D", cluster.work.toString(), "-o", "/dev/null",
                "--rsmap=gpu=1", "--wrap", "touch " + started + "; sleep 300");
        String job = a.out().strip();
        Polls.await(Duration.ofSeconds(30), () -> Files.exists(started));
        assertThat(cluster.held()).as("running, its task under the policy").containsKey(job);
        assertThat(cluster.run(List.of("scancel", job), Map.of()).code()).isZero();
        assertThat(cluster.awaitReleased(job)).doesNotContainKey(job);
    }

    @Test
    @Order(9)
    void stepsOfABatchJob_runUnderItsOneGrant_andCannotAskForAnother() throws Exception {
        Path steps = cluster.work.resolve("steps.out");
        Path inner = cluster.work.resolve("inner.out");
        Run a = cluster.asNobody(Map.of(), "sbatch", "--parsable", "-D", cluster.work.toString(), "-o", "/dev/null",
                "--rsmap=gpu=1[model=H100]", "--wrap",
                "srun sh -c 'env | grep ^SGE_HGR_; grep :devices: /proc/self/cgroup' > " + steps + " 2>&1; "
                        + "srun --rsmap='gpu=1[model=H100]' true >> " + steps + " 2>&1; "
                        + "srun --rsmap=gpu=1 true > " + inner + " 2>&1; echo rc=$? >> " + inner);
        assertThat(a.code()).as(a.toString()).isZero();
        String job = a.out().strip();
        awaitGone(job);
        assertThat(Files.readAllLines(steps)).as(cluster.logs())
                .containsExactly("SGE_HGR_gpu=gpu1", "5:devices:/rsmap/" + job.strip());
        assertThat(Files.readString(inner)).contains("--rsmap: job " + job + " already has its resource maps "
                + "(gpu=1[model=H100]); its steps share them").doesNotContain("rc=0");
    }

    /** a batch job grows by card 1 with rsmap-shell, opens it, gives it back, and is denied it again. */
    @Test
    @Order(10)
    void aBatchJob_growsAndShrinks_withRsmapShell() throws Exception {
        Path shell = Files.copy(Path.of("target", "rsmap-shell").toAbsolutePath(),
                cluster.work.resolve("rsmap-shell"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Path out = cluster.work.resolve("realloc.out");
        String card1 = "$(cat " + cluster.device(1) + " 2>&1 | sed 's/.*: //')";
        Run a = cluster.asNobody(Map.of(), "sbatch", "--parsable", "-D", cluster.work.toString(), "-o", out.toString(),
                "--rsmap=gpu=1[model=A100]", "--wrap",
                "echo \"before: " + card1 + "\"; " + shell + " realloc --add 'gpu=1[model=H100]'; echo grow=$?; "
                        + "echo \"grown: " + card1 + "\"; " + shell + " realloc --ids '{\"" + cluster.node
                        + "\":{\"gpu\":[\"gpu1\"]}}'; echo shrink=$?; " + shell + " release; echo release=$?; "
                        + "echo \"released: " + card1 + "\"");
        assertThat(a.code()).as(a.toString()).isZero();
        String job = a.out().strip();
        awaitGone(job);
        assertThat(Files.readString(out)).as(cluster.logs())
                .isEqualTo("before: Operation not permitted\n"
                        + "SGE_HGR_gpu=gpu0 gpu1\ngrow=0\n"
                        + "grown: No such device or address\n"
                        + "SGE_HGR_gpu=gpu0\nshrink=0\n"
                        + "SGE_HGR_gpu=gpu0\nrelease=0\n"
                        + "released: Operation not permitted\n");
    }

    // job_submit.lua at submission: GRES from --rsmap, alternatives checked (--rsmap-filter: SlurmSubmitIT).

    private Run sbatch(String... args) throws Exception {
        String[] cmd = new String[args.length + 6];
        System.arraycopy(new String[] {"sbatch", "--parsable", "-D", cluster.work.toString(), "-o", "/dev/null"}, 0,
                cmd, 0, 6);
        System.arraycopy(args, 0, cmd, 6, args.length);
        return cluster.asNobody(Map.of(), cmd);
    }

    private void awaitGone(String job) throws Exception {
        Polls.await(Duration.ofSeconds(30), () -> cluster.run(List.of("squeue", "-h", "-j", job), Map.of()).out().isBlank());
    }

    @Test
    @Order(11)
    void aJobsRsmapRequest_becomesItsGres_andMoreThanTheNodeHas_isRefusedAtSubmission() throws Exception {
        Run a = sbatch("--hold", "--rsmap=gpu=2[same=id],nic=1", "--wrap", "true");
        assertThat(a.code()).as(a.toString()).isZero();
        String job = a.out().strip();
        try {
            String shown = cluster.run(List.of("scontrol", "show", "job", job), Map.of()).out();
            // gpu is counted by gres.conf (rsmap gres-conf); nic is per slot and left to rsmapd
            assertThat(shown).contains("TresPerNode=gres:rsmap_gpu:2\n");
        } finally {
            cluster.run(List.of("scancel", job), Map.of());
        }
        Run withGres = sbatch("--hold", "--gres=rsmap_gpu:1", "--rsmap=gpu=3", "--wrap", "true");
        assertThat(withGres.code()).as(withGres.toString()).isZero();
        String job2 = withGres.out().strip();
        try {
            assertThat(cluster.run(List.of("scontrol", "show", "job", job2), Map.of()).out())
                    .as("the user's own --gres stands").contains("TresPerNode=gres:rsmap_gpu:1\n");
        } finally {
            cluster.run(List.of("scancel", job2), Map.of());
        }
        // 8 instances (two cards shared four ways): a ninth can never be granted here, and Slurm knows it
        Run nine = sbatch("--rsmap=gpu=9", "--wrap", "true");
        assertThat(nine.code()).isNotZero();
        assertThat(nine.err()).contains("Requested node configuration is not available");
        Run srunNine = srun(Map.of(), "--rsmap=gpu=9", "true");
        assertThat(srunNine.code()).isNotZero();
        assertThat(srunNine.err()).contains("Requested node configuration is not available");
        assertThat(cluster.run(List.of("squeue", "-h"), Map.of()).out()).as("nothing queued").isBlank();
    }

    /**
     * --rsmap alternatives, in the user's order: the node grants the first that can be granted now
     * (JOB_START "alternatives"), exactly one; each alternative's form is checked at submission.
     */
    @Test
    @Order(16)
    void rsmapAlternatives_theNodeGrantsTheFirstThatCanStart() throws Exception {
        Path out = cluster.work.resolve("alternatives.out");
        Run a = cluster.asNobody(Map.of(), "sbatch", "--parsable", "-D", cluster.work.toString(), "-o", out.toString(),
                "--rsmap=gpu=9 || gpu=2[same=id]", "--wrap", "echo \"gpu=$SGE_HGR_gpu\"");
        assertThat(a.code()).as(a.toString()).isZero();
        awaitGone(a.out().strip());
        assertThat(Files.readString(out)).as("gpu=9 cannot: the second, two shares of one card")
                .matches("gpu=(gpu0 gpu0|gpu1 gpu1)\n");
        Run bad = sbatch("--rsmap=gpu=1 || gpu=1[scope=job]", "--wrap", "true");
        assertThat(bad.code()).isNotZero();
        assertThat(bad.err()).contains("--rsmap: alternative 1: column 7: scope= needs same=");
    }

    /** A stopped rsmapd costs the plugin its timeout= per call: the job fails, Slurm answers, the next job runs. */
    @Test
    @Order(17)
    void aStoppedRsmapd_failsTheJobWithinTheTimeout_slurmAnswersMeanwhile_andTheNextJobRuns() throws Exception {
        cluster.signalRsmapd("STOP");
        try {
            long t0 = System.nanoTime();
            FutureTask<Run> job = new FutureTask<>(() -> srun(Map.of(), "--rsmap=gpu=1", "true"));
            new Thread(job).start();
            Thread.sleep(1000); // the thing tested: a second on, the prolog waiting for rsmapd holds up no other answer
            assertThat(cluster.run(List.of("scontrol", "ping"), Map.of()).out()).as("slurmctld answers").contains("UP");
            Run sinfo = cluster.run(List.of("sinfo", "-h", "-o", "%T"), Map.of());
            assertThat(sinfo.code() + " " + sinfo.out()).as("the node is served").startsWith("0 ")
                    .doesNotContain("drain");
            Run r = job.get(120, TimeUnit.SECONDS);
            assertThat(r.code()).as("the job fails: %s", r).isNotZero();
            assertThat(r.err()).contains("rsmapd did not answer");
            assertThat((System.nanoTime() - t0) / 1_000_000_000L).as("prolog, task and epilog bounds, and Slurm's")
                    .isLessThan(3L * SlurmCluster.SPANK_TIMEOUT + 30);
            assertThat(cluster.run(List.of("sinfo", "-h", "-o", "%T"), Map.of()).out()).doesNotContain("drain");
        } finally {
            cluster.signalRsmapd("CONT");
        }
        Run next = srun(Map.of(), "--rsmap=gpu=1", "sh", "-c", "echo gpu=$SGE_HGR_gpu");
        assertThat(next.code() + " " + next.out()).as("the next job runs after SIGCONT").startsWith("0 gpu=gpu");
    }
}
