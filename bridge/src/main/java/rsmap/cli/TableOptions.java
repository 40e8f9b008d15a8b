// --complexes FILE and --max-rsmap-ids N: the complex table and the limits of every offline command.
package rsmap.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;
import rsmap.Limits;
import rsmap.complex.ComplexTable;

/** A picocli mixin: one definition of the two options, and the reading of the table with them. */
final class TableOptions {
    @Option(names = "--complexes", required = true, paramLabel = "FILE", description = "The complex table.")
    Path complexes;

    @Option(names = "--max-rsmap-ids", paramLabel = "N", defaultValue = "512",
            description = "MAX_RSMAP_IDS: most ids the short form gpu=N may create; 0 rejects it (default 512).")
    int maxRsmapIds;

    Limits limits() throws Refused {
        return Inputs.limits(maxRsmapIds);
    }

    /** The complex table, read with {@link #limits()}. */
    ComplexTable table() throws Refused {
        return Inputs.complexes(complexes, limits());
    }
}
