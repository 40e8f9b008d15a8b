// rsmapd's log, the daemon's and its socket server's: one line per event on stderr, with the syslog priority
// prefix journald reads ("<4>") when stderr is the journal, and "rsmapd: " otherwise.
package rsmap.log;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * Journald-friendly lines: under systemd (JOURNAL_STREAM set) each line starts with its priority. Below the
 * wire and the daemon, so that both write by one rule.
 */
public final class Log {
    /** syslog priorities, as sd-daemon(3) prefixes them. */
    public enum Level {
        ERROR(3), WARNING(4), INFO(6);

        final int priority;

        Level(int priority) {
            this.priority = priority;
        }
    }

    private static final boolean JOURNAL = System.getenv("JOURNAL_STREAM") != null;
    /** Where lines go instead of stderr (rsmap demo shows them inline); null: stderr. */
    private static volatile java.util.function.Consumer<String> sink;

    private Log() {
    }

    /** What every line of {@code level} starts with: its priority under journald, else the name and level. */
    static String prefix(Level level, boolean journal) {
        if (journal) {
            return "<" + level.priority + ">";
        }
        return "rsmapd: " + (level == Level.INFO ? "" : level.name().toLowerCase(java.util.Locale.ROOT) + ": ");
    }

    /** The line as it is written: one line, whatever the message holds. */
    static String format(Level level, String message, boolean journal) {
        return prefix(level, journal) + message.replace('\n', ' ').replace('\r', ' ');
    }

    public static void write(Level level, String message) {
        java.util.function.Consumer<String> s = sink;
        if (s != null) {
            s.accept(format(level, message, false));
        } else {
            write(System.err, level, message);
        }
    }

    /** Sends the lines to {@code to} (null: back to stderr). */
    public static void redirect(java.util.function.Consumer<String> to) {
        sink = to;
    }

    static void write(PrintStream out, Level level, String message) {
        out.println(format(level, message, JOURNAL));
    }

    /**
     * What the server could not handle and did not expect (a handler that threw, whose client got ERROR
     * category {@code internal}; the catch-alls of the selector, the workers and the connections, which keep
     * serving the others after one connection's trouble): {@code what} because of {@code e}, then its stack
     * trace, each an ERROR line, never swallowed and never across the socket. Always on stderr, which
     * systemd's journal keeps, in one write (lines of two threads do not interleave mid-line): a redirect is
     * for the story of a run (the demo's inline lines, a training run's silence), and a fault is never left out
     * of it.
     */
    public static void report(String what, Throwable e) {
        StringWriter trace = new StringWriter();
        e.printStackTrace(new PrintWriter(trace));
        String prefix = prefix(Level.ERROR, JOURNAL);
        StringBuilder out = new StringBuilder();
        out.append(prefix).append(what).append(": ").append(e).append('\n');
        for (String line : trace.toString().split("\n")) {
            if (!line.isBlank()) {
                out.append(prefix).append("  ").append(line.strip()).append('\n');
            }
        }
        System.err.print(out);
        System.err.flush();
    }
}
