// What the daemon logged lately: every line goes to the log (stderr, journald), the last ones are kept.
package rsmap.log;

import java.util.ArrayDeque;
import java.util.List;

/** The latest lines the daemon logged, for tests and the demo; bounded, a daemon runs for months. */
public final class LogBook {
    private static final int KEPT = 1000;
    private final ArrayDeque<String> lines = new ArrayDeque<>();

    public void note(Log.Level level, String line) {
        synchronized (lines) {
            if (lines.size() == KEPT) {
                lines.removeFirst();
            }
            lines.add(line);
        }
        Log.write(level, line);
    }

    public List<String> lines() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }
}
