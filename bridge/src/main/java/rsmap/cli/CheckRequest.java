// rsmap check-request: validates a -l request list and prints its canonical form.
package rsmap.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.request.RequestList;

@Command(name = "check-request", mixinStandardHelpOptions = true, description = "Check a -l request list against a complex table and print the "
        + "canonical form.")
final class CheckRequest implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    TableOptions tables;

    @Parameters(index = "0", paramLabel = "REQUEST", description = "The request, e.g. 'gpu=4[same=id],lic=1'.")
    String request;

    @Override
    public Integer call() throws Refused {
        ComplexTable table = tables.table();
        try {
            spec.commandLine().getOut().println(RequestList.parse(request, table, tables.limits()));
            return 0;
        } catch (ParseException e) {
            throw new Refused(e.getMessage());
        }
    }
}
