// The rsmap command line: one entry point, exit codes 0 done, 2 refused input, 1 internal fault.
package rsmap.cli;

import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code rsmap <command>}. Every refusal is one {@code error:} line on stderr and exit code 2; an
 * internal fault is one {@code internal error:} line and exit code 1 (the stack trace only with
 * {@code RSMAP_DEBUG=1}).
 */
@Command(name = "rsmap", mixinStandardHelpOptions = true, version = "rsmap 0.1.0",
        description = "Resource maps for Grid-Engine-family execution hosts.",
        subcommands = {CheckComplexes.class, CheckHost.class, CheckRequest.class, CheckJobspec.class, CheckR.class,
            CheckFilter.class, GresConf.class, Discover.class,
            Simulate.class, DevicePolicyCommand.class, DaemonCommands.Status.class, DaemonCommands.Explain.class,
            DaemonCommands.Reload.class, DaemonCommands.Events.class, Place.class, Demo.class, CdiSpecCommand.class,
            Drain.class, Drain.Undrain.class})
public final class Main implements Runnable {
    public static final int OK = 0;
    public static final int INTERNAL = 1;
    public static final int REFUSED = 2;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        // Identifiers may be any Unicode: write UTF-8 whatever the locale (bin/rsmap sets a UTF-8 locale
        // so that the arguments are decoded as UTF-8 too).
        System.exit(run(new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), true),
                new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true), args));
    }

    /** Runs the CLI with the given streams and returns the exit code (used by tests too). */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cl = new CommandLine(new Main());
        cl.setExpandAtFiles(false); // '@x' is a value, never a file to read arguments from
        cl.setOut(out);
        cl.setErr(err);
        cl.setParameterExceptionHandler((ex, a) -> {
            String name = ex.getCommandLine().getCommandName();
            err.println("error: " + oneLine(ex.getMessage()) + " (see '"
                    + (name.equals("rsmap") ? "rsmap" : "rsmap " + name) + " --help')");
            return REFUSED;
        });
        cl.setExecutionExceptionHandler((ex, c, parsed) -> {
            if (ex instanceof Refused) {
                err.println("error: " + oneLine(ex.getMessage()));
                if (!((Refused) ex).detail().isEmpty()) {
                    err.println(((Refused) ex).detail());
                }
                return ((Refused) ex).exit();
            }
            err.println("internal error: " + ex);
            if ("1".equals(System.getenv("RSMAP_DEBUG"))) {
                ex.printStackTrace(err);
            }
            return INTERNAL;
        });
        int code = cl.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    /** Missing command: print usage to stderr and refuse. */
    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: check-complexes, "
                + "check-host, check-request, check-jobspec, check-r, check-filter, gres-conf, simulate, device-policy, status, "
                + "explain, reload, events, drain, undrain or demo");
    }

    static String oneLine(String s) {
        return s == null ? "" : s.replace('\n', ' ').replace('\r', ' ');
    }
}
