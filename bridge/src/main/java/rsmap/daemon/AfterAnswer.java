// What a command leaves to do once its answer is sent, which its client does not wait for: a new job's
// environment file and log line. Done before the daemon runs any later command.
package rsmap.daemon;

import java.util.ArrayList;
import java.util.List;

/**
 * The worker that ran a command settles this after handing its answer to the socket ({@link
 * Commands#answered}); every later command settles it first under the daemon's lock, so nothing that
 * follows (a job's JOB_ENTER, its JOB_END) ever sees the work undone. A kill in between loses only what
 * the journal makes again at the next start ({@link HostState#rewriteEnvFiles}) and a log line.
 */
final class AfterAnswer {
    private final EnvFiles envFiles;
    /** In the order it was left (guarded by the daemon's lock). */
    private final List<Runnable> work = new ArrayList<>();
    /** Whether {@link #work} holds any: read by a worker before it takes the lock. */
    private volatile boolean any;

    AfterAnswer(EnvFiles envFiles) {
        this.envFiles = envFiles;
    }

    /** {@code r} runs once the command's answer is sent (under the daemon's lock). */
    void add(Runnable r) {
        work.add(r);
        any = true;
    }

    /** Whether anything waits for {@link #settle}. */
    boolean unsettled() {
        return any || envFiles.unsettled();
    }

    /** Does what waited, in order: the environment files first, then the rest (under the daemon's lock). */
    void settle() {
        envFiles.settle();
        if (!any) {
            return;
        }
        List<Runnable> now = List.copyOf(work);
        work.clear();
        any = false;
        now.forEach(Runnable::run);
    }
}
