// rsmap simulate: runs the allocation core over a JSON Lines script (see the allocation core and docs/allocation.md).
package rsmap.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import rsmap.Limits;
import rsmap.sim.Simulation;

@Command(name = "simulate", mixinStandardHelpOptions = true, description = "Drive the allocation core from a JSON "
        + "Lines script (- for stdin) and print one JSON answer per operation.")
final class Simulate implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    TableOptions tables;

    @Option(names = "--human", description = "Answer explain operations in a human form instead of JSON.")
    boolean human;

    @Parameters(index = "0", paramLabel = "SCRIPT", description = "The script, JSON Lines; - reads stdin.")
    String script;

    @Override
    public Integer call() throws Refused {
        Limits limits = tables.limits();
        Simulation sim = new Simulation(tables.table(), limits, human);
        try (BufferedReader in = script.equals("-")
                ? new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                : Files.newBufferedReader(Path.of(script), StandardCharsets.UTF_8)) {
            sim.run(in, spec.commandLine().getOut());
        } catch (NoSuchFileException e) {
            throw new Refused(script + ": no such file");
        } catch (CharacterCodingException e) {
            throw new Refused(script + ": not UTF-8 text");
        } catch (IOException e) {
            throw new Refused(script + ": cannot be read (" + e.getMessage() + ")");
        }
        return 0;
    }
}
