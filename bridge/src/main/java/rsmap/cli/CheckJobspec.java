// rsmap check-jobspec FILE: validates a Flux jobspec as version 1 (RFC 25) and prints its canonical JSON.
package rsmap.cli;

import picocli.CommandLine.Command;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.flux.Jobspec;

@Command(name = "check-jobspec", mixinStandardHelpOptions = true, description = "Check a Flux jobspec (JSON or "
        + "YAML) as version 1 (RFC 25) and print its canonical JSON; exit 2 with one error line naming the JSON "
        + "path otherwise.")
final class CheckJobspec extends FluxCheck {
    @Override
    Object parse(String text, Limits limits) throws ParseException {
        return Jobspec.parse(text, limits);
    }
}
