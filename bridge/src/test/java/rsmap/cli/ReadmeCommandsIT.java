// Runs the README's main-job command and bin/rsmap as a user would, against the packaged jar.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ReadmeCommandsIT {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    record Result(int code, String out, String err) {
    }

    static Result sh(String command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("sh", "-c", command).directory(ROOT.toFile()).start();
        p.getOutputStream().close();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + command);
        }
        return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    @Test
    void readme_mainJobCommand_runsTheDemo_explainingEveryJob() throws Exception {
        String readme = Files.readString(ROOT.resolve("README.md"));
        String main = readme.lines().filter(l -> l.contains("bin/rsmap demo")).findFirst().orElseThrow();
        // The build part already ran (we are in verify); run the command part as written.
        String run = main.substring(main.indexOf("bin/rsmap"));
        Result r = sh(run);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).contains("job 101 saw SGE_HGR_gpu=0 0 0 0", "job 102 saw SGE_HGR_gpu=1",
                "job 103 saw SGE_HGR_nic=ib1", "-> exit 99: the host cannot serve it now",
                "=> no group large enough: needs 4 free instances agreeing on id, the largest group (1) has 3",
                "job 104 saw SGE_HGR_gpu=0 0 0 0", "rsmap-hook: request: column 7: scope= needs same=",
                "-> exit 100: the request is refused", "rsmapd holds nothing now", "the temporary directory is gone");
        assertThat(r.out()).doesNotContain("evil\n");
        assertThat(readme).contains("mvn -B verify");
    }

    @Test
    void readme_tour_aDaemonByHand_runsAsWritten_andShowsWhyARequestWaits() throws Exception {
        String readme = Files.readString(ROOT.resolve("README.md"));
        int step = readme.indexOf("**3. A daemon by hand.**");
        int from = readme.indexOf("```sh\n", step) + "```sh\n".length();
        String block = readme.substring(from, readme.indexOf("```", from));
        sh("rm -rf /tmp/rsmap-tour");
        try {
            Result r = sh("bash -e -c " + quote(block));
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).contains("\n0 0\n", "held by job 7", "gpu=4[same=id] cannot start on host node01 now",
                    "=> no group large enough");
            assertThat(r.err()).contains("job 7 released", "job 8 released");
        } finally {
            sh("pkill -f rsmap-tour/rsmapd.conf; rm -rf /tmp/rsmap-tour");
        }
    }

    private static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    @Test
    void binRsmap_checkHost_printsTheCanonicalExampleHost() throws Exception {
        Result r = sh("bin/rsmap check-host --complexes examples/complexes \"$(cat examples/node01.complex_values)\"");
        assertThat(r.err()).isEmpty();
        assertThat(r.code()).isZero();
        assertThat(r.out()).startsWith("gpu=8(0[devices=/dev/nvidia0:rw;/dev/nvidiactl:r,memory=80G,");
    }

    @Test
    void binRsmap_refusal_exitsTwoWithOneLine() throws Exception {
        Result r = sh("bin/rsmap check-request --complexes examples/complexes 'gpu=4[scope=job]'");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("error: column 7: scope= needs same=\n");
    }

    @Test
    void binRsmap_notBuilt_printsAHint() throws Exception {
        Path fake = Files.createTempDirectory("rsmap-unbuilt");
        Files.createDirectories(fake.resolve("bin"));
        Files.copy(ROOT.resolve("bin/rsmap"), fake.resolve("bin/rsmap"));
        Process p = new ProcessBuilder(fake.resolve("bin/rsmap").toString(), "check-complexes", "x").start();
        p.waitFor(30, TimeUnit.SECONDS);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).isEqualTo(1);
        assertThat(err).contains("not built yet").doesNotContain("\n\n");
    }
}
