// The one way the daemon writes its journal: a record is written (refused when it cannot be, the caller
// undoing its change), and every record written is forced before any answer that depends on it goes out.
package rsmap.daemon.records;

import java.io.IOException;
import rsmap.daemon.state.Refusal;
import rsmap.journal.Journal;
import rsmap.log.Log;
import rsmap.log.LogBook;

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
public final class Records {
    /** The exit status of a daemon stopped by its journal (EX_TEMPFAIL: a restart continues). */
    static final int HALT = 75;
    private final Journal journal;
    private final LogBook log;
    private final Fence fence;

    /**
     * What an authority checks before any answer leaves (its {@code Lease}), and the epoch it stamps on every
     * record; a host has none (epoch 0: no stamp).
     */
    public interface Fence {
        long epoch();

        /** Returns when this daemon may answer; otherwise it stops it. */
        void check();

        Fence NONE = new Fence() {
            @Override
            public long epoch() {
                return 0;
            }

            @Override
            public void check() {
            }
        };
    }

    public Records(Journal journal, LogBook log) {
        this(journal, log, Fence.NONE);
    }

    public Records(Journal journal, LogBook log, Fence fence) {
        this.journal = journal;
        this.log = log;
        this.fence = fence;
    }

    private String line(JournalRecord r) {
        return JournalRecord.stamped(r.line(), fence.epoch());
    }

    /** Writes {@code r}: on disk at the next {@link #force}, which runs before the command's answer. */
    public void write(JournalRecord r) throws Refusal {
        try {
            journal.write(line(r));
        } catch (IOException e) {
            throw new JournalRefusal(e);
        }
    }

    /** Writes {@code r}, which no answer waits for: on disk with the next force of another record. */
    public void writeLazily(JournalRecord r) throws Refusal {
        try {
            journal.writeLazily(line(r));
        } catch (IOException e) {
            throw new JournalRefusal(e);
        }
    }

    /** Writes and forces {@code r} now: for a change already made that cannot be undone. */
    public void writeNow(JournalRecord r) {
        try {
            journal.write(line(r));
        } catch (IOException e) {
            halt(e);
        }
        force();
    }

    /**
     * Begins forcing what was written on the journal's thread while the caller goes on ({@link
     * Journal#forceSoon}); its answer still waits for {@link #force}.
     */
    public void forceSoon() {
        journal.forceSoon();
    }

    /**
     * Forces every record written so far (group commit: for all the commands waiting, and while the
     * authority decides a global part); a failure stops rsmapd.
     */
    public void force() {
        try {
            journal.sync();
        } catch (IOException e) {
            halt(e);
        }
        fence.check(); // an authority that lost its lease answers nothing, forced or not
    }

    private void halt(IOException e) {
        log.note(Log.Level.ERROR, "journal: " + e.getMessage() + ": rsmapd stops; its restart continues from the"
                + " journal, which may not hold the last changes (none of them was answered)");
        Runtime.getRuntime().halt(HALT);
    }

    /** A record that could not be written: the command is refused (unavailable), and nothing else can be written. */
    public static final class JournalRefusal extends Refusal {
        private static final long serialVersionUID = 1L;

        JournalRefusal(IOException e) {
            super(Refusal.Kind.UNAVAILABLE, "journal: " + e.getMessage());
        }
    }
}
