// Test support: CDI spec files checked against the CDI project's own JSON schema, as the distribution ships
// it (golang-github-container-orchestrated-devices-container-device-interface-dev), with python3-jsonschema.
package rsmap.cdi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

public final class CdiSchema {
    /** The schema of cdiVersion 0.5.0 (schema.json, defs.json), read where the package puts it; never copied. */
    public static final Path DIR = Path.of("/usr/share/gocode/src/github.com/container-orchestrated-devices/"
            + "container-device-interface/schema");
    private static final Path SCRIPT = Path.of("src", "test", "resources", "cdi", "validate.py").toAbsolutePath();

    private CdiSchema() {
    }

    /** The schema and a validator are here; else the test aborts, and under CI=true fails, naming what is missing. */
    public static void assumePresent() throws Exception {
        String missing = !Files.isRegularFile(DIR.resolve("schema.json")) ? DIR + "/schema.json (apt-get install "
                + "golang-github-container-orchestrated-devices-container-device-interface-dev)"
                : new ProcessBuilder("python3", "-c", "import jsonschema").start().waitFor() != 0
                ? "python3's jsonschema (apt-get install python3-jsonschema)" : null;
        if (missing != null) {
            if ("true".equals(System.getenv("CI"))) {
                fail("missing: " + missing);
            }
            Assumptions.abort("missing: " + missing);
        }
    }

    /** The schema's complaints about {@code files}: empty when every one is a valid spec. */
    public static String errors(List<Path> files) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("python3", SCRIPT.toString(), DIR.toString()));
        files.forEach(f -> cmd.add(f.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the validator ends").isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return p.exitValue() == 0 ? "" : out.isEmpty() ? "validator exit " + p.exitValue() : out;
    }

    /** Every file is a valid spec of its version. */
    public static void assertValid(List<Path> files) throws Exception {
        assertThat(files).as("spec files").isNotEmpty();
        assertThat(errors(files)).as("CDI schema errors of " + files).isEmpty();
    }
}
