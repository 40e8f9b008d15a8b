// What check-jobspec and check-r share: read a JSON or YAML file, print its canonical JSON, or refuse
// with the file, the place and the JSON path of the problem.
package rsmap.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import rsmap.Limits;
import rsmap.ParseException;

/** A Flux format's check; subclasses name the parser. */
abstract class FluxCheck implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The file, JSON or YAML.")
    Path file;

    /** The parsed value, whose toString() is its canonical JSON. */
    abstract Object parse(String text, Limits limits) throws ParseException;

    @Override
    public Integer call() throws Refused {
        String text = Inputs.text(file, Limits.DEFAULT);
        try {
            spec.commandLine().getOut().println(parse(text, Limits.DEFAULT));
            return 0;
        } catch (ParseException e) {
            throw new Refused(file + ": " + e.lineAndColumn() + ": " + e.problem());
        }
    }
}
