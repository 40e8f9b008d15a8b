// rsmap check-request: validates a -l request list and prints its canonical form.
package rsmap.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.request.RequestList;

@Command(name = "check-request", mixinStandardHelpOptions = true, description = "Check a -l request list against a complex table and print the "
        + "canonical form.")
final class CheckRequest implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--complexes", required = true, paramLabel = "FILE", description = "The complex table.")
    Path complexes;

    @Parameters(index = "0", paramLabel = "REQUEST", description = "The request, e.g. 'gpu=4[same=id],lic=1'.")
    String request;

    @Override
    public Integer call() throws Refused {
        ComplexTable table = Inputs.complexes(complexes, Limits.DEFAULT);
        try {
            spec.commandLine().getOut().println(RequestList.parse(request, table));
            return 0;
        } catch (ParseException e) {
            throw new Refused(e.getMessage());
        }
    }
}
