// Golden files for rsmap simulate: every script under golden/simulate/*.in answers exactly its .out.
package rsmap.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;

class GoldenSimulationTest {
    static final Path DIR = Path.of("src", "test", "resources", "golden", "simulate");

    static Stream<String> scripts() throws IOException {
        try (Stream<Path> s = Files.list(DIR)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".in"))
                    .map(n -> n.substring(0, n.length() - 3)).sorted().toList().stream();
        }
    }

    /** Set -Drsmap.golden.update=true to rewrite the .out files after a deliberate change; review the diff. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("scripts")
    void simulate_script_answersItsGoldenFile(String name) throws IOException, ParseException {
        ComplexTable table = ComplexTable.parse(Files.readString(DIR.resolve("complexes")));
        boolean human = name.endsWith("_human");
        Simulation sim = new Simulation(table, Limits.DEFAULT, human);
        StringWriter out = new StringWriter();
        sim.run(new BufferedReader(new StringReader(Files.readString(DIR.resolve(name + ".in")))), out);
        Path golden = DIR.resolve(name + ".out");
        if (Boolean.getBoolean("rsmap.golden.update")) {
            Files.writeString(golden, out.toString(), StandardCharsets.UTF_8);
        }
        assertThat(out.toString()).isEqualTo(Files.readString(golden));
    }
}
