// The CLI contract of the resource-map language: check-complexes, check-host, check-request; exit codes and one error line.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class MainTest {
    static final Path EXAMPLES = Path.of("..", "examples");
    static final String COMPLEXES = EXAMPLES.resolve("complexes").toString();

    @TempDir
    static Path tmp;

    record Run(int code, String out, String err) {
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out), new PrintWriter(err), args);
        return new Run(code, out.toString(), err.toString());
    }

    static Path file(String name, String text) throws IOException {
        return Files.writeString(tmp.resolve(name), text, StandardCharsets.UTF_8);
    }

    @BeforeAll
    static void examplesExist() {
        assertThat(EXAMPLES.resolve("complexes")).exists();
    }

    @Test
    void checkComplexes_example_exitsZeroSilently() {
        Run r = run("check-complexes", COMPLEXES);
        assertThat(r.code()).isZero();
        assertThat(r.err()).isEmpty();
    }

    @Test
    void checkComplexes_invalid_exitsTwoWithOneErrorLine() throws IOException {
        Path bad = file("bad", "# ok\ngpu gpu RSMAP == YES HOST 0 0\n");
        Run r = run("check-complexes", bad.toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("error: " + bad + ": line 2, column 15: a resource map must have relop <= "
                + "(EXCL is for booleans), not ==\n");
    }

    @Test
    void checkComplexes_binaryOrMissingFile_isRefused() throws IOException {
        Path bin = tmp.resolve("bin");
        Files.write(bin, new byte[] {(byte) 0xff, (byte) 0xfe, 0, 1});
        assertThat(run("check-complexes", bin.toString()).err()).isEqualTo("error: " + bin + ": not UTF-8 text\n");
        Run missing = run("check-complexes", tmp.resolve("nope").toString());
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err()).endsWith("nope: no such file\n");
    }

    /** args after the complexes file | exit code | stdout or the error line. */
    static Stream<Arguments> hostCases() {
        return Stream.of(
                Arguments.of(new String[] {"gpu=4"}, 0, "gpu=4(0-3)"),
                Arguments.of(new String[] {"gpu=5(0 1 2 3 x)"}, 0, "gpu=5(0-3 x)"),
                Arguments.of(new String[] {"gpu=4(0 1 1 2)"}, 0, "gpu=4(0 1 1 2)"),
                Arguments.of(new String[] {"gpu=2(0 1)"}, 0, "gpu=2(0 1)"),
                Arguments.of(new String[] {"--max-rsmap-ids", "0", "gpu=4"}, 2,
                        "error: column 5: the short form 'gpu=4' is disabled (MAX_RSMAP_IDS is 0); list the ids, "
                                + "e.g. gpu=2(0 1)"),
                Arguments.of(new String[] {"--max-rsmap-ids", "8", "gpu=9"}, 2,
                        "error: column 5: the short form 'gpu=9' creates more than MAX_RSMAP_IDS=8 ids; list them "
                                + "explicitly"),
                Arguments.of(new String[] {"gpu=3(a b)"}, 2,
                        "error: column 5: amount 3 of 'gpu' does not match the 2 instances listed"),
                Arguments.of(new String[] {"--max-rsmap-ids", "-1", "gpu=1"}, 2,
                        "error: --max-rsmap-ids must be 0 or more, not -1"));
    }

    @ParameterizedTest
    @MethodSource("hostCases")
    void checkHost_value_printsCanonicalFormOrOneError(String[] args, int code, String expected) {
        String[] all = Stream.concat(Stream.of("check-host", "--complexes", COMPLEXES), Stream.of(args))
                .toArray(String[]::new);
        Run r = run(all);
        assertThat(r.code()).isEqualTo(code);
        if (code == 0) {
            assertThat(r.out()).isEqualTo(expected + "\n");
            assertThat(r.err()).isEmpty();
        } else {
            assertThat(r.err()).isEqualTo(expected + "\n");
            assertThat(r.out()).isEmpty();
        }
    }

    @Test
    void checkHost_canonicalOutput_isAcceptedAgainUnchanged() throws IOException {
        String value = Files.readString(EXAMPLES.resolve("node01.complex_values"));
        Run first = run("check-host", "--complexes", COMPLEXES, value);
        assertThat(first.code()).isZero();
        Run second = run("check-host", "--complexes", COMPLEXES, first.out().strip());
        assertThat(second.out()).isEqualTo(first.out());
    }

    @Test
    void checkRequest_scopeWithoutSame_isTheIssueExample() {
        Run r = run("check-request", "--complexes", COMPLEXES, "gpu=4[scope=job]");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("error: column 7: scope= needs same=\n");
    }

    @Test
    void checkRequest_valid_printsCanonicalForm() {
        Run r = run("check-request", "--complexes", COMPLEXES, "gpu=4[scope=job,same=id],lic=1");
        assertThat(r.code()).isZero();
        assertThat(r.out()).isEqualTo("gpu=4[same=id,scope=job],lic=1\n");
    }

    @Test
    void checkRequest_everyExampleRequest_isAccepted() throws IOException {
        for (String line : Files.readAllLines(EXAMPLES.resolve("requests"))) {
            if (!line.isBlank() && !line.startsWith("#")) {
                assertThat(run("check-request", "--complexes", COMPLEXES, line).code()).as(line).isZero();
            }
        }
    }

    @Test
    void usageErrors_exitTwoWithOneErrorLine() {
        for (String[] args : new String[][] {{}, {"check-host"}, {"no-such-command"}, {"check-request", "--complexes"}}) {
            Run r = run(args);
            assertThat(r.code()).as(String.join(" ", args)).isEqualTo(2);
            assertThat(r.err()).startsWith("error: ").endsWith("\n");
            assertThat(r.err().strip()).doesNotContain("\n");
        }
    }

    @Test
    void badComplexesFileForCheckHost_namesTheFile() throws IOException {
        Path bad = file("bad2", "x x NOPE == YES NO 0 0\n");
        Run r = run("check-host", "--complexes", bad.toString(), "gpu=1");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("error: " + bad + ": line 1, column 5: unknown type 'NOPE'");
    }

    @Test
    void help_exitsZero() {
        assertThat(run("--help").code()).isZero();
        assertThat(run("check-host", "--help").out()).contains("--max-rsmap-ids");
    }
}
