// rsmapd's log: one line per event on stderr, with the syslog priority prefix journald reads ("<4>")
// when stderr is the journal, and "rsmapd: " otherwise.
package rsmap.daemon;

import java.io.PrintStream;

/** Journald-friendly lines: under systemd (JOURNAL_STREAM set) each line starts with its priority. */
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

    /** The line as it is written: one line, whatever the message holds. */
    static String format(Level level, String message, boolean journal) {
        String one = message.replace('\n', ' ').replace('\r', ' ');
        if (journal) {
            return "<" + level.priority + ">" + one;
        }
        return "rsmapd: " + (level == Level.INFO ? "" : level.name().toLowerCase(java.util.Locale.ROOT) + ": ") + one;
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
}
