// The README's Commands table and `rsmap --help` list the same commands, so that neither drifts from the other.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ReadmeTest {
    /** The project root's README: surefire runs each module's tests in the module's folder. */
    static final Path README = Path.of("..", "README.md");
    /** {@code `rsmap NAME} in a table row's first cell: a command of rsmap (not rsmapd, rsmap-hook, ...). */
    private static final Pattern COMMAND = Pattern.compile("`rsmap ([a-z][a-z-]*)");

    /** The commands that {@code rsmap --help} lists: Main's subcommands as picocli prints them, hidden ones left out. */
    static Set<String> helpCommands() {
        return new CommandLine(new Main()).getSubcommands().entrySet().stream()
                .filter(e -> !e.getValue().getCommandSpec().usageMessage().hidden())
                .map(java.util.Map.Entry::getKey).collect(Collectors.toCollection(TreeSet::new));
    }

    /** The rsmap commands named in the first cell of the rows of the README's "## Commands" table. */
    static Set<String> readmeCommands(String readme) {
        int from = readme.indexOf("\n## Commands\n");
        assertThat(from).as("README has a Commands section").isNotNegative();
        int next = readme.indexOf("\n## ", from + 1);
        Set<String> names = new TreeSet<>();
        readme.substring(from, next < 0 ? readme.length() : next).lines()
                .filter(l -> l.startsWith("| `")).forEach(row -> {
                    Matcher m = COMMAND.matcher(row.substring(0, row.indexOf(" |", 1)));
                    while (m.find()) {
                        names.add(m.group(1));
                    }
                });
        return names;
    }

    @Test
    void commandsTable_againstHelp_namesEveryCommandAndNoOther() throws IOException {
        Set<String> help = helpCommands();
        assertThat(help).as("rsmap --help lists its commands").contains("status", "drain", "undrain", "gres-conf");
        assertThat(readmeCommands(Files.readString(README))).as("README.md, Commands, against rsmap --help")
                .containsExactlyElementsOf(help);
    }

    @Test
    void readmeCommands_ofATable_takesTheFirstCellsRsmapCommandsOnly() {
        String readme = "x\n## Commands\n\n| command | what |\n| --- | --- |\n"
                + "| `rsmap status --cluster`, `rsmap place` | see `rsmap explain` |\n"
                + "| `rsmapd [--config FILE]` | the daemon |\n| `rsmap-hook prolog\\|epilog` | hooks |\n"
                + "| `rsmap drain MAP ID` | taints |\n\n## Layout\n\n| `rsmap demo` | not here |\n";
        assertThat(readmeCommands(readme)).containsExactly("drain", "place", "status");
    }
}
