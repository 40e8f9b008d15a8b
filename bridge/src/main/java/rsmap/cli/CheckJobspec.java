// rsmap check-jobspec FILE: validates a Flux jobspec as version 1 (RFC 25) and prints its canonical JSON.
package rsmap.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.flux.Jobspec;

@Command(name = "check-jobspec", mixinStandardHelpOptions = true, description = "Check a Flux jobspec (JSON or "
        + "YAML) as version 1 (RFC 25) and print its canonical JSON; exit 2 with one error line naming the JSON "
        + "path otherwise.")
final class CheckJobspec implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The jobspec.")
    Path file;

    @Override
    public Integer call() throws Refused {
        String text = Inputs.text(file, Limits.DEFAULT);
        try {
            spec.commandLine().getOut().println(Jobspec.parse(text, Limits.DEFAULT));
            return 0;
        } catch (ParseException e) {
            throw new Refused(file + ": " + e.lineAndColumn() + ": " + e.problem());
        }
    }
}
