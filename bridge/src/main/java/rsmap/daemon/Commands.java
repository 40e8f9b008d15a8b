// The dispatch of the agent protocol's commands after INIT: the handler table of this daemon's role
// (HostCommands or AuthorityCommands), each command judged by Access, run under the daemon's lock.
package rsmap.daemon;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import rsmap.daemon.job.GlobalPart;
import rsmap.daemon.job.JobLifecycle;
import rsmap.daemon.records.Records;
import rsmap.daemon.state.Access;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Refusal;
import rsmap.daemon.state.WireErrors;
import rsmap.log.Log;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.daemon.state.JobId;

/**
 * the PTP proxy protocol's commands as docs/protocol.md lists them. Access is judged by {@link Access} before a
 * handler runs; a handler's failure is an ERROR whose reason is one line of at most {@link Args#MAX_REASON}
 * characters, and changes nothing.
 */
final class Commands {
    /** The longest ERROR reason rsmapd sends: one line, well inside any client's frame limit. */
    /** The release's why of a job whose start was undone because its client went away meanwhile. */
    static final String CLIENT_GONE = "client gone";

    /** One command's execution: the events before its OK. */
    interface Handler {
        List<Frame> handle(Frame command, Session session) throws Refusal;
    }

    /**
     * A role's commands: a handler per code, run under the daemon's lock; those of {@code outsideLock} take
     * only what they need of it themselves (the authority's PLACE lane); and what the role forgets of a
     * session that ended.
     */
    record Table(Map<Code, Handler> handlers, Map<Code, Handler> outsideLock, Consumer<Session> closed) {
        Table {
            handlers = Map.copyOf(new EnumMap<>(handlers));
            outsideLock = Map.copyOf(outsideLock);
        }
    }

    private final Table table;
    private final HostState s;
    private final Access access;
    private final GlobalPart global;
    private final Records records;
    private final Object lock;

    Commands(Table table, HostState s, Access access, GlobalPart global, Records records, Object lock) {
        this.table = table;
        this.s = s;
        this.access = access;
        this.global = global;
        this.records = records;
        this.lock = lock;
    }

    /**
     * QUERY of the whole state (no argument, or {@code {}}) answered from what {@link HostState} keeps of it
     * for this peer: no lock, no I/O, so the selector thread answers it at once (Session.Handler#quick)
     * and monitors that poll never queue behind job starts. Null when nothing is kept: {@link #handle}
     * builds it under the lock and keeps it until the next change.
     */
    List<Frame> quick(Code code, Frame command, Session session) {
        if (code != Code.QUERY || !wholeState(command) || !global.cacheable()) { // a link's view changes apart
            return null;
        }
        String cached = s.cachedState(viewer(session.peer()));
        return cached == null ? null : List.of(Frame.of(command.tid(), Code.STATE.value(), cached));
    }

    /** QUERY of the whole state: no argument, or the empty object (what most clients send). */
    static boolean wholeState(Frame command) {
        return command.args().isEmpty() || command.args().size() == 1 && command.text(0).strip().equals("{}");
    }

    /**
     * Whose view of the state {@code peer} gets, as the key of QUERY's cache: null for root and the admin
     * (everything), else the user's name (other users' jobs masked by name: {@link Access#mayQuery}).
     */
    String viewer(Session.Peer peer) {
        return access.privileged(peer) ? null : peer.user();
    }

    /** One command of one client; state changes are serialised under the daemon's lock. */
    List<Frame> handle(Code code, Frame command, Session session) throws Session.CommandException {
        List<Frame> kept = quick(code, command, session);
        if (kept != null) {
            return kept;
        }
        Handler unlocked = table.outsideLock().get(code);
        Handler h = unlocked != null ? unlocked : table.handlers().get(code);
        if (h == null) {
            throw WireErrors.toWire(Refusal.refused(code + " is not a command of this daemon"));
        }
        try {
            access.authorise(code, session.peer());
            if (unlocked != null) {
                return unlocked.handle(command, session); // never holds up a grant; it writes nothing
            }
            List<Frame> answer;
            synchronized (lock) {
                s.after.settle(); // what an earlier answer left to write comes before anything this command sees
                answer = h.handle(command, session);
            }
            synced(); // group commit: the force runs outside the lock, the next commands decide meanwhile
            return answer;
        } catch (Refusal e) {
            String reason = e.getMessage() == null ? code + " failed" : e.getMessage();
            if (reason.length() <= Args.MAX_REASON && reason.indexOf('\n') < 0 && reason.indexOf('\r') < 0) {
                throw WireErrors.toWire(e);
            }
            throw WireErrors.toWire(new Refusal(e.kind(), Args.oneLine(reason, Args.MAX_REASON)));
        }
    }

    /**
     * A client gone before its JOB_START or REALLOC is decided gets nothing (a prolog that gave up
     * waiting has already told execd to reschedule the job): refused, nothing changed. A JOB_START
     * granted while its client went away is ended at once (why {@value #CLIENT_GONE}), in the same
     * force as its grant.
     */
    static void present(Session session, Code code, JobId id) throws Refusal {
        if (session.gone()) {
            String why = code.name() + " of job " + id + ": the client closed its connection before it was decided;"
                    + " nothing granted";
            Log.write(Log.Level.INFO, why); // its ERROR reaches no one
            throw Refusal.busy(why); // the job is rescheduled, nothing held
        }
    }

    /**
     * A start granted while its client went away ({@code fresh}: it held nothing before) is ended and
     * forced with its grant, and refused like one whose client left before it was decided.
     */
    static List<Frame> startedFor(Session session, JobLifecycle lifecycle, JobId id, boolean fresh, List<Frame> granted)
            throws Refusal {
        if (fresh && session.gone()) { // it left while this start was decided: undone with its grant
            lifecycle.end(id, CLIENT_GONE);
            lifecycle.forced(); // the refusal below skips the group commit
            present(session, Code.JOB_START, id);
        }
        return granted;
    }

    /** Forces what the commands wrote to the journal before their answers ({@link Records#force}). */
    void synced() {
        records.force();
    }

    /**
     * A command's answer was handed to the socket: the work that no answer waits for (a new job's
     * environment file and log line, {@code AfterAnswer}) is done now, while the client reads.
     */
    void answered() {
        if (s.after.unsettled()) {
            synchronized (lock) {
                s.after.settle();
            }
        }
    }

    /** The session ended: its stream goes, and whatever the role kept of it. */
    void closed(Session session) {
        synchronized (lock) {
            table.closed().accept(session);
        }
    }

    static void noArguments(Frame command) throws Refusal {
        if (!command.args().isEmpty()) {
            throw Refusal.malformed("expected no argument, got " + command.args().size());
        }
    }
}
