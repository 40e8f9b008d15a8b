// What the server could not handle and did not expect: one line and the stack trace in rsmapd's log (stderr,
// which systemd's journal keeps), never swallowed and never across the socket.
package rsmap.wire;

import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * The log of the protocol layer, which has no other: a handler that threw (the client got ERROR category
 * {@code internal}) and the catch-alls of the selector, the workers and the connections, which keep serving
 * the others after one connection's trouble. Each line starts as rsmapd's log lines do ({@code rsmapd: error: }
 * on a terminal, the syslog priority {@code <3>} under journald), the trace's lines too.
 */
final class Faults {
    private static final boolean JOURNAL = System.getenv("JOURNAL_STREAM") != null;

    private Faults() {
    }

    /** {@code what} happened because of {@code e}: its message and its stack trace, one log line each. */
    static void report(String what, Throwable e) {
        StringWriter trace = new StringWriter();
        e.printStackTrace(new PrintWriter(trace));
        StringBuilder out = new StringBuilder();
        out.append(prefix()).append(what).append(": ").append(e).append('\n');
        for (String line : trace.toString().split("\n")) {
            if (!line.isBlank()) {
                out.append(prefix()).append("  ").append(line.strip()).append('\n');
            }
        }
        System.err.print(out); // one write: lines of two threads do not interleave mid-line
        System.err.flush();
    }

    private static String prefix() {
        return JOURNAL ? "<3>" : "rsmapd: error: ";
    }
}
