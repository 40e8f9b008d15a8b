// Jobs with RSMAP_FILTER through the execd stand-in, the real C hook and a real rsmapd: a host
// that fails the filter reschedules the job (prolog 99, the attribute named), a filter that does not parse
// is the job's error (100), and a job whose filter this host passes runs.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class NodeFilterIT {
    Path shared;
    Path hook;
    Path starter;
    Config config;
    Daemon daemon;

    @BeforeEach
    void start() throws Exception {
        assertThat(ExecdStubIT.STUB).as("built by the native-stubs module").isExecutable();
        shared = Files.createTempDirectory("rsmap-filter", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        hook = Files.copy(ExecdStubIT.HOOK, shared.resolve("rsmap-hook"));
        starter = Files.createSymbolicLink(shared.resolve("rsmap-starter"), Path.of("rsmap-hook"));
        config = TestDaemon.config(shared, "gpu=2(0 1)", "socket_mode = 0666",
                "attributes = arch=x86_64, cpu_speed=1.8GHz, kernel=6.5.2", "filter = arch != \"ppc64le\"");
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

    /** A job through execd-stub with the hooks, RSMAP_REQUEST and RSMAP_FILTER set where not null. */
    private String job(String id, String request, String filter, String shell) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(ExecdStubIT.STUB.toString(), "--spool",
                shared.resolve("spool").toString(), "--host", "node01", "--job", id, "--cwd", "/", "--tmpdir",
                shared.toString(), "--prolog", "root@" + hook + " prolog", "--starter", starter.toString(),
                "--epilog", "root@" + hook + " epilog", "--", "sh", "-c", shell));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("RSMAP_SOCKET", config.socket().toString());
        pb.environment().remove("RSMAP_REQUEST");
        pb.environment().remove("RSMAP_FILTER");
        if (request != null) {
            pb.environment().put("RSMAP_REQUEST", request);
        }
        if (filter != null) {
            pb.environment().put("RSMAP_FILTER", filter);
        }
        Process p = pb.start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8) + "exit=" + p.exitValue();
    }

    @Test
    void aFilterThisHostFails_reschedulesTheJob_namingTheAttribute_andNothingIsHeld() throws Exception {
        String r = job("1", "gpu=1", "cpu_speed > 2GHz", "echo job-ran");
        assertThat(r).doesNotContain("job-ran")
                .contains("rsmap-hook: filter: job filter fails on node01: cpu_speed=1.8GHz does not satisfy "
                        + "cpu_speed > 2GHz")
                .contains("prolog asked to reschedule").endsWith("exit=99");
        // PBS's alternatives design, use case 4: "Linux version 6.5 or higher, but none will be running 6.5.2"
        assertThat(job("2", null, "kernel >= 6.5 && kernel != 6.5.2", "echo job-ran")).doesNotContain("job-ran")
                .contains("kernel=6.5.2 does not satisfy kernel != 6.5.2").endsWith("exit=99");
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void aFilterThatDoesNotParse_isTheJobsError() throws Exception {
        assertThat(job("3", "gpu=1", "arch = \"x86_64\"", "echo job-ran")).doesNotContain("job-ran")
                .contains("rsmap-hook: filter: column 6: '=' is not an operator; compare with ==").endsWith("exit=100");
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }

    @Test
    void aFilterThisHostPasses_runsTheJobWithItsGrant_withOrWithoutARequest() throws Exception {
        assertThat(job("4", "gpu=1", "cpu_speed > 1GHz && arch == \"x86_64\"", "echo \"gpu=$SGE_HGR_gpu\""))
                .contains("gpu=0\n").endsWith("exit=0");
        assertThat(job("5", null, "!(host in [\"node02\"])", "echo ran")).contains("ran\n").endsWith("exit=0");
        assertThat(daemon.cluster().runningJobs()).isEmpty();
    }
}
