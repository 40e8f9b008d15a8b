// rsmap check-filter: the canonical form, or one error line with a caret and exit 2.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.cli.MainTest.run;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CheckFilterTest {
    @TempDir
    Path tmp;

    /** filter | canonical form: the seed's four use cases and a spelling of each. */
    static Stream<Arguments> valid() {
        return Stream.of(
                Arguments.of("cpu_speed>2GHz", "cpu_speed > 2GHz"),
                Arguments.of("!(host in [\"x\",\"y\",\"z\"])", "!(host in [\"x\", \"y\", \"z\"])"),
                Arguments.of("!(arch in [\"aarch64\",\"ppc64le\"])", "!(arch in [\"aarch64\", \"ppc64le\"])"),
                Arguments.of("kernel>=6.5&&kernel!=6.5.2", "kernel >= 6.5 && kernel != 6.5.2"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valid")
    void checkFilter_valid_printsTheCanonicalForm(String filter, String canonical) {
        MainTest.Run r = run("check-filter", filter);
        assertThat(r.code()).isZero();
        assertThat(r.out()).isEqualTo(canonical + "\n");
        assertThat(r.err()).isEmpty();
    }

    @Test
    void checkFilter_invalid_exitsTwoWithOneErrorLineAndACaret() {
        MainTest.Run r = run("check-filter", "cpu_speed > 2GHz && arch = \"x\"");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).isEqualTo("error: column 26: '=' is not an operator; compare with ==\n"
                + "  cpu_speed > 2GHz && arch = \"x\"\n"
                + "                           ^\n");
    }

    @Test
    void checkFilter_hostileInput_errorLineOnlyNoStackTrace() {
        MainTest.Run r = run("check-filter", "(".repeat(10_000) + "a == 1");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("error: column 65: filter nested deeper than 64 levels\n");
        MainTest.Run nul = run("check-filter", "a == \"\u0000\"");
        assertThat(nul.code()).isEqualTo(2);
        assertThat(nul.err()).isEqualTo("error: column 7: control character U+0000 in a string\n");
    }

    @Test
    void checkFilter_types_refusesALiteralOfAnotherType() throws IOException {
        Path types = Files.writeString(tmp.resolve("types.json"), "{\"kernel\":\"version\",\"cpu_speed\":\"number\"}",
                StandardCharsets.UTF_8);
        MainTest.Run ok = run("check-filter", "--types", types.toString(), "kernel >= 6.5");
        assertThat(ok.code()).isZero();
        assertThat(ok.out()).isEqualTo("kernel >= 6.5\n");
        MainTest.Run r = run("check-filter", "--types", types.toString(), "kernel >= 6.5 && cpu_speed > \"fast\"");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("error: column 30: '>' orders numbers and versions, not strings\n");
        MainTest.Run mismatch = run("check-filter", "--types", types.toString(), "kernel == \"6.5\"");
        assertThat(mismatch.err()).startsWith("error: column 11: 'kernel' is declared version, and \"6.5\" is a "
                + "string\n");
    }

    @Test
    void checkFilter_badTypesFile_isRefusedNamingTheFile() throws IOException {
        Path bad = Files.writeString(tmp.resolve("bad.json"), "{\n\"kernel\": \"semver\"}", StandardCharsets.UTF_8);
        MainTest.Run r = run("check-filter", "--types", bad.toString(), "kernel >= 6.5");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("error: " + bad + ": line 2, column 1: unknown type 'semver' for 'kernel' "
                + "(string, number, version or boolean)\n");
        MainTest.Run missing = run("check-filter", "--types", tmp.resolve("none").toString(), "a == 1");
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err()).endsWith("none: no such file\n");
    }
}
