// rsmap check-filter: validates a node filter and prints its canonical form.
package rsmap.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.node.AttributeTypes;
import rsmap.node.Filter;

@Command(name = "check-filter", mixinStandardHelpOptions = true, description = "Check a node filter such as "
        + "'cpu_speed > 2GHz && !(host in [\"x\"])' and print its canonical form; exit 2 with one error line and a "
        + "caret under the column otherwise.")
final class CheckFilter implements Callable<Integer> {
    /** Longest input line shown under the error with its caret; longer ones get the error line only. */
    private static final int MAX_CARET_LINE = 200;

    @Spec
    CommandSpec spec;

    @Option(names = "--types", paramLabel = "FILE", description = "Declared attribute types, a JSON object such "
            + "as {\"kernel\":\"version\",\"cpu_speed\":\"number\"}: a literal of another type is refused.")
    Path types;

    @Parameters(index = "0", paramLabel = "EXPR", description = "The filter.")
    String filter;

    @Override
    public Integer call() throws Refused {
        Limits limits = Limits.DEFAULT;
        AttributeTypes declared = AttributeTypes.NONE;
        if (types != null) {
            String text = Inputs.text(types, limits);
            try {
                declared = AttributeTypes.parse(text, limits);
            } catch (ParseException e) {
                throw new Refused(types + ": " + e.lineAndColumn() + ": " + e.problem());
            }
        }
        try {
            spec.commandLine().getOut().println(Filter.parse(filter, declared, limits));
            return 0;
        } catch (ParseException e) {
            throw new Refused(e.getMessage(), caret(e));
        }
    }

    /** The offending line and a caret under the column, when the line is short and printable. */
    static String caret(ParseException e) {
        String shown = e.caretLine();
        String line = shown.substring(0, shown.lastIndexOf('\n'));
        if (line.length() > MAX_CARET_LINE || line.codePoints().anyMatch(c -> Character.isISOControl(c)
                && c != '\t' || Character.isSurrogate((char) c))) {
            return "";
        }
        // A tab before the column would move the caret: show tabs as blanks.
        return "  " + shown.replace('\t', ' ').replace("\n", "\n  ");
    }
}
