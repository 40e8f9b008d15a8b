// What a command leaves to do once its answer is sent, which its client does not wait for: a new job's
// environment file and log line. Done before any later client command runs.
package rsmap.daemon.state;

import java.util.ArrayList;
import java.util.List;
import rsmap.log.Log;

/**
 * The worker that ran a locked command settles this after handing its answer to the socket ({@link
 * Commands#answered}); every later locked command settles it first, so no later command (a job's
 * JOB_ENTER, its JOB_END) sees the work undone; a job's end runs the waiting log lines first ({@link
 * #work}), so that its lines keep their order. A kill in between loses only what start-up makes again
 * (the environment files' agreement at start-up) and a log line. A daemon without environment files (an authority)
 * does its work at once: nothing there is worth a second take of the lock.
 */
public final class AfterAnswer {
    /** The jobs' environment files as the after-answer work sees them (EnvFiles; none on an authority). */
    public interface Files {
        /** Whether files are written after the answer at all (an authority writes none). */
        boolean writes();

        /** Whether a file waits to be written. */
        public boolean unsettled();

        /** Writes the files that wait. */
        public void settle();
    }

    private final Files envFiles;
    private final boolean defers;
    /** In the order it was left (guarded by the daemon's lock). */
    private final List<Runnable> work = new ArrayList<>();
    /** Whether {@link #work} holds any: read by a worker before it takes the lock. */
    private volatile boolean any;

    public AfterAnswer(Files envFiles) {
        this.envFiles = envFiles;
        this.defers = envFiles.writes();
    }

    /** {@code r} runs once the command's answer is sent (under the daemon's lock). */
    public void add(Runnable r) {
        if (!defers) {
            r.run();
            return;
        }
        work.add(r);
        any = true;
    }

    /** Whether anything waits for {@link #settle}. */
    public boolean unsettled() {
        return any || envFiles.unsettled();
    }

    /** Does what waited, in order: the environment files first, then the rest (under the daemon's lock). */
    public void settle() {
        envFiles.settle();
        work();
    }

    /** Runs what waited except the environment files: before a job's end, which drops its own file unwritten. */
    public void work() {
        if (!any) {
            return;
        }
        List<Runnable> now = List.copyOf(work);
        work.clear();
        any = false;
        for (Runnable r : now) {
            try {
                r.run();
            } catch (RuntimeException e) { // the next client's command is not the one to fail for it
                Log.write(Log.Level.ERROR, "the work after an answer failed: " + e);
            }
        }
    }
}
