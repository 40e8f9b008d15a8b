// The journal's own thread, which begins a force when asked and returns the asker at once: a job's start
// goes on making its files and answer while the disk writes its record.
package rsmap.journal;

import java.io.IOException;

/**
 * One daemon thread per journal, started at the first {@link #ask}; asks while it forces are taken by its
 * next force (or by an asker's own {@link Journal#sync}, whichever comes first). A force that fails is kept
 * by the journal ({@link Journal#sync} fails with it), never retried here. Never interrupted: an interrupt
 * during a force would close the journal's channel.
 */
final class ForceAhead {
    private final Journal journal;
    /** Started at the first ask (guarded by this). */
    private Thread thread;
    /** A force was asked for and not yet begun; the journal closed (guarded by this). */
    private boolean asked;
    private boolean stopping;

    ForceAhead(Journal journal) {
        this.journal = journal;
    }

    synchronized void ask() {
        if (stopping) {
            return;
        }
        if (thread == null) {
            thread = new Thread(this::run, "journal-force");
            thread.setDaemon(true);
            thread.start();
        }
        asked = true;
        notify();
    }

    /** The journal closes: the force begun, if any, finishes (finding nothing left to force), then the thread ends. */
    synchronized void stop() {
        stopping = true;
        notify();
    }

    private void run() {
        while (true) {
            synchronized (this) {
                while (!asked && !stopping) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (stopping) {
                    return;
                }
                asked = false;
            }
            try {
                journal.sync();
            } catch (IOException e) {
                // kept by the journal: the sync of the command that asked fails with it
            } catch (RuntimeException e) {
                // the asker's own sync meets it again and says it; this thread goes on forcing ahead
            }
        }
    }
}
