// --rsmap-filter at submission, through a real slurmctld and the packaged job_submit.lua: the authority asked
// inside slurmctld by the Lua module rsmap_place.so (no process per submission), and by a place command where
// RSMAP_PLACE_COMMAND names one (docs/integration-slurm.md, "At submission").
package rsmap.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import rsmap.slurm.SlurmCluster.Run;
import rsmap.wire.Polls;

class SlurmSubmitIT extends OneSlurmCluster {
    /** The authority's refusal of "cpu_speed unparsable", as the user sees it. */
    static final String REFUSED = "rsmap: --rsmap-filter: column 11: expected ==, !=, <, <=, >, >= or in after "
            + "'cpu_speed', found 'u'";

    /** slurmctld's log line when a place command asks rather than the module. */
    static final String BY_RUNNING = "rsmap: --rsmap-filter is asked of the authority by running";

    private Run sbatch(String... args) throws Exception {
        String[] cmd = new String[args.length + 4];
        System.arraycopy(new String[] {"sbatch", "--parsable", "-D", cluster.work.toString()}, 0, cmd, 0, 4);
        System.arraycopy(args, 0, cmd, 4, args.length);
        return cluster.asNobody(Map.of(), cmd);
    }

    /** A job whose output goes to {@code out}, run to its end: its output. */
    private String ran(String filter, Path out) throws Exception {
        Run a = sbatch("-o", out.toString(), "--rsmap-filter=" + filter, "--wrap", "echo ran");
        assertThat(a.code()).as(a.toString()).isZero();
        String job = a.out().strip();
        Polls.await(Duration.ofSeconds(30), () -> cluster.run(List.of("squeue", "-h", "-j", job), Map.of()).out().isBlank());
        return Files.readString(out);
    }

    private String slurmctldLog() throws Exception {
        return Files.readString(cluster.dir.resolve("log/slurmctld.log"));
    }

    @Test
    @Order(1)
    void aJobWhoseFilterTheNodePasses_runs_askedInsideSlurmctldByTheModule() throws Exception {
        assertThat(ran("cpu_speed > 2GHz", cluster.work.resolve("filtered.out"))).as(cluster.logs()).isEqualTo("ran\n");
        assertThat(slurmctldLog()).contains("rsmap: --rsmap-filter is asked of the authority in slurmctld by "
                + SubmitScript.MODULE).as("no place command ran").doesNotContain(BY_RUNNING);
    }

    @Test
    @Order(2)
    void aJobWhoseFilterNoHostPasses_isRefusedAtSubmission_namingTheAttribute() throws Exception {
        Run a = sbatch("-o", "/dev/null", "--rsmap=gpu=1", "--rsmap-filter=cpu_speed > 3GHz", "--wrap", "true");
        assertThat(a.code()).as(a + "\n" + cluster.logs()).isNotZero();
        assertThat(a.err()).contains("rsmap: no host passes --rsmap-filter 'cpu_speed > 3GHz': " + cluster.node
                + " fails on cpu_speed: cpu_speed=2.4GHz does not satisfy cpu_speed > 3GHz");
        Run s = cluster.asNobody(Map.of(), "srun", "-D", cluster.work.toString(), "--rsmap-filter=cpu_speed > 3GHz",
                "true");
        assertThat(s.code()).isNotZero();
        assertThat(s.err()).contains("fails on cpu_speed");
        assertThat(slurmctldLog()).as("asked by the module, no place command").doesNotContain(BY_RUNNING);
        assertThat(cluster.run(List.of("squeue", "-h"), Map.of()).out()).as("nothing queued").isBlank();
    }

    /** The authority's own refusal (category refused) through the module; a control character the plugin's. */
    @Test
    @Order(3)
    void aFilterThatDoesNotParse_isRefusedWithItsColumn_andOneWithAControlCharacterByThePlugin() throws Exception {
        Run a = sbatch("-o", "/dev/null", "--rsmap-filter=cpu_speed unparsable", "--wrap", "true");
        assertThat(a.code()).isNotZero();
        assertThat(a.err()).contains(REFUSED);
        Run ctl = sbatch("-o", "/dev/null", "--rsmap-filter=arch == \"x\u0001\"", "--wrap", "true");
        assertThat(ctl.code()).isNotZero();
        assertThat(ctl.err()).contains("--rsmap-filter: column 11: control character U+0001");
        assertThat(cluster.run(List.of("squeue", "-h"), Map.of()).out()).as("nothing queued").isBlank();
    }

    /** Fail open at submission: rsmapd checks the filter again at job start (JOB_START's "filter"). */
    @Test
    @Order(4)
    void authorityUnreachable_theJobIsAcceptedAtSubmission() throws Exception {
        Path socket = cluster.dir.resolve("authority.sock");
        Path away = cluster.dir.resolve("authority.sock.away");
        Files.move(socket, away, StandardCopyOption.ATOMIC_MOVE);
        try {
            assertThat(ran("cpu_speed > 2GHz", cluster.work.resolve("open.out"))).isEqualTo("ran\n");
        } finally {
            Files.move(away, socket, StandardCopyOption.ATOMIC_MOVE);
        }
        assertThat(slurmctldLog()).contains("rsmap: " + SubmitScript.MODULE + " unreachable or unreadable (error: "
                + "cannot reach rsmapd at " + socket + ": No such file or directory): --rsmap-filter not checked at "
                + "submission; rsmapd checks it at job start");
    }

    /**
     * RSMAP_PLACE_COMMAND set: the command, as before the module, each call exec'd by popen's shell (slurmctld
     * waits for it directly), its faults judged by the same categories.
     */
    @Test
    @Order(5)
    void aPlaceCommand_isRunPerSubmission_withTheSameJudgement() throws Exception {
        cluster.submit.use(Map.of("RSMAP_PLACE_COMMAND", cluster.submit.command().toString()));
        try {
            Files.deleteIfExists(cluster.submit.placeArgs());
            Files.deleteIfExists(cluster.submit.placeParent());
            assertThat(ran("cpu_speed > 2GHz", cluster.work.resolve("command.out"))).isEqualTo("ran\n");
            assertThat(Files.readAllLines(cluster.submit.placeArgs())).containsExactly("--filter cpu_speed > 2GHz "
                    + "--json --socket " + cluster.dir.resolve("authority.sock"));
            assertThat(Files.readAllLines(cluster.submit.placeParent())).containsExactly("slurmctld");
            assertThat(slurmctldLog()).contains("rsmap: --rsmap-filter is asked of the authority by running "
                    + cluster.submit.command() + " (RSMAP_PLACE_COMMAND is set)");
            Run a = sbatch("-o", "/dev/null", "--rsmap-filter=cpu_speed unparsable", "--wrap", "true");
            assertThat(a.code()).isNotZero();
            assertThat(a.err()).contains(REFUSED);
            assertThat(ran("unreachable == 1", cluster.work.resolve("command-open.out"))).isEqualTo("ran\n");
            assertThat(slurmctldLog()).contains("rsmap: " + cluster.submit.command() + " unreachable or unreadable "
                    + "(error: authority unreachable): --rsmap-filter not checked at submission");
        } finally {
            cluster.submit.use(Map.of());
        }
    }

    /**
     * job_submit.lua pointed at an execution host's socket by mistake: the host answers PLACE unavailable (a
     * setup error), so the job is accepted and the log says why, not every filtered job refused.
     */
    @Test
    @Order(6)
    void anExecutionHostsSocket_isASetupError_theJobIsAcceptedAndTheLogSaysWhy() throws Exception {
        cluster.submit.use(Map.of("RSMAP_AUTHORITY_SOCKET", cluster.socket().toString()));
        try {
            assertThat(ran("cpu_speed > 2GHz", cluster.work.resolve("host-socket.out"))).isEqualTo("ran\n");
            assertThat(slurmctldLog()).contains("rsmap: " + SubmitScript.MODULE + " unreachable or unreadable (error: "
                    + "rsmapd: PLACE is the authority's (role = authority)");
        } finally {
            cluster.submit.use(Map.of());
        }
    }
}
