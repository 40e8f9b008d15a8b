// Keeps the shape of STYLE.md: plugin depends on the JDK (and Jackson) only, packages stay shallow.
package rsmap;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ArchitectureTest {
    static final Path MAIN = Path.of("src", "main", "java");

    static List<Path> sources() throws IOException {
        try (Stream<Path> s = Files.walk(MAIN)) {
            return s.filter(p -> p.toString().endsWith(".java")).collect(Collectors.toList());
        }
    }

    @Test
    void plugin_importsOnlyTheJdkJacksonAndItself() throws IOException {
        for (Path f : sources()) {
            for (String line : Files.readAllLines(f)) {
                if (line.startsWith("import ")) {
                    String what = line.replace("import static ", "").replace("import ", "");
                    assertThat(what).as(f.toString()).matches("(java\\.|rsmap\\.|com\\.fasterxml\\.jackson\\.).*");
                }
            }
        }
    }

    @Test
    void packages_areAtMostTwoLevelsBelowRsmap() throws IOException {
        for (Path f : sources()) {
            Path rel = MAIN.relativize(f.getParent());
            assertThat(rel.getName(0).toString()).isEqualTo("rsmap");
            assertThat(rel.getNameCount()).as(f.toString()).isLessThanOrEqualTo(3);
        }
    }
}
