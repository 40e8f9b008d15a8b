// rsmap check-complexes FILE: validates a complex table.
package rsmap.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import rsmap.Limits;

@Command(name = "check-complexes", mixinStandardHelpOptions = true, description = "Check a complex table in the qconf -sc format; exit 0 when "
        + "valid, 2 with one error line otherwise.")
final class CheckComplexes implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "FILE", description = "The complex table.")
    Path file;

    @Override
    public Integer call() throws Refused {
        Inputs.complexes(file, Limits.DEFAULT);
        return 0;
    }
}
