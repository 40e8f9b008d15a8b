// rsmap check-r FILE: validates a Flux resource set R version 1 (RFC 20) and prints its canonical JSON.
package rsmap.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.flux.R;

@Command(name = "check-r", mixinStandardHelpOptions = true, description = "Check a Flux R (JSON or YAML) as "
        + "version 1 (RFC 20) and print its canonical JSON; exit 2 with one error line naming the JSON path "
        + "otherwise.")
final class CheckR implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The R.")
    Path file;

    @Override
    public Integer call() throws Refused {
        String text = Inputs.text(file, Limits.DEFAULT);
        try {
            spec.commandLine().getOut().println(R.parse(text, Limits.DEFAULT));
            return 0;
        } catch (ParseException e) {
            throw new Refused(file + ": " + e.lineAndColumn() + ": " + e.problem());
        }
    }
}
