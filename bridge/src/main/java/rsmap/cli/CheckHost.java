// rsmap check-host: validates a host's complex_values and prints its canonical form.
package rsmap.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;

@Command(name = "check-host", mixinStandardHelpOptions = true, description = "Check a host's complex_values against a complex table and print "
        + "the canonical form.")
final class CheckHost implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    TableOptions tables;

    @Parameters(index = "0", paramLabel = "VALUE", description = "The complex_values, e.g. 'gpu=2(gpu0 gpu1)'.")
    String value;

    @Override
    public Integer call() throws Refused {
        Limits limits = tables.limits();
        ComplexTable table = tables.table();
        try {
            spec.commandLine().getOut().println(ComplexValues.parse(value, table, limits));
            return 0;
        } catch (ParseException e) {
            throw new Refused(e.getMessage());
        }
    }
}
