// rsmap check-r FILE: validates a Flux resource set R version 1 (RFC 20) and prints its canonical JSON.
package rsmap.cli;

import picocli.CommandLine.Command;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.flux.R;

@Command(name = "check-r", mixinStandardHelpOptions = true, description = "Check a Flux R (JSON or YAML) as "
        + "version 1 (RFC 20) and print its canonical JSON; exit 2 with one error line naming the JSON path "
        + "otherwise.")
final class CheckR extends FluxCheck {
    @Override
    Object parse(String text, Limits limits) throws ParseException {
        return R.parse(text, limits);
    }
}
