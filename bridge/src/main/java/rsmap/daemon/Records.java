// The one way the daemon writes its journal: a record is written (refused when it cannot be, the caller
// undoing its change), and every record written is forced before any answer that depends on it goes out.
package rsmap.daemon;

import java.io.IOException;
import rsmap.journal.Journal;
import rsmap.wire.Category;
import rsmap.wire.Session;

/**
 * The rule, one for every record (docs/architecture.md, "The journal"):
 * <ul>
 *   <li>{@link #write}: a record that cannot be written refuses the command ({@code journal: ...}); its
 *   caller writes before it changes anything, or undoes what it changed, so nothing half-made stays.</li>
 *   <li>{@link #force}: a force that fails stops rsmapd at once (exit 75): the core is ahead of the disk,
 *   and the records' fate on disk is unknown; no answer that depends on them was sent, and the restart
 *   continues from what the journal holds.</li>
 *   <li>{@link #writeNow}: a change the core already made and cannot undo (a realloc's answer goes to
 *   other sessions at once) is written and forced on the spot; if either fails, that is a failed force.</li>
 * </ul>
 * {@link #writeLazily} is for what can be learnt again after a crash: forced with the next force.
 */
final class Records {
    /** The exit status of a daemon stopped by its journal (EX_TEMPFAIL: a restart continues). */
    static final int HALT = 75;
    private final Journal journal;
    private final LogBook log;

    Records(Journal journal, LogBook log) {
        this.journal = journal;
        this.log = log;
    }

    /** Writes {@code r}: on disk at the next {@link #force}, which runs before the command's answer. */
    void write(JournalRecord r) throws Session.CommandException {
        try {
            journal.write(r.line());
        } catch (IOException e) {
            throw new Session.CommandException(rsmap.wire.Category.UNAVAILABLE, "journal: " + e.getMessage());
        }
    }

    /** Writes {@code r}, which no answer waits for: on disk with the next force of another record. */
    void writeLazily(JournalRecord r) throws Session.CommandException {
        try {
            journal.writeLazily(r.line());
        } catch (IOException e) {
            throw new Session.CommandException(rsmap.wire.Category.UNAVAILABLE, "journal: " + e.getMessage());
        }
    }

    /** Writes and forces {@code r} now: for a change already made that cannot be undone. */
    void writeNow(JournalRecord r) {
        try {
            journal.write(r.line());
        } catch (IOException e) {
            halt(e);
        }
        force();
    }

    /**
     * Forces every record written so far (group commit: for all the commands waiting, and while the
     * authority decides a global part); a failure stops rsmapd.
     */
    void force() {
        try {
            journal.sync();
        } catch (IOException e) {
            halt(e);
        }
    }

    private void halt(IOException e) {
        log.note(Log.Level.ERROR, "journal: " + e.getMessage() + ": rsmapd stops; its restart continues from the"
                + " journal, which may not hold the last changes (none of them was answered)");
        Runtime.getRuntime().halt(HALT);
    }
}
