// The protocol rules of one connection: INIT first with a matching version (and over TCP a credential),
// one OK or ERROR per command with its TID, never an exception across the socket.
package rsmap.wire;

import java.util.ArrayList;
import java.util.List;
import rsmap.Hex;
import rsmap.log.Log;

/**
 * the PTP proxy protocol, "Proxy Protocol": one command may cause several events; all carry the command's TID; the
 * last is exactly one OK or ERROR. INIT carries the protocol version and must come first; a mismatch is
 * an ERROR naming both versions. QUIT is answered OK and ends the session. Commands other than these
 * go to the {@link Handler}, whose failures become ERROR events. A handler may leave its command open
 * ({@link #keepOpen}, START_EVENTS) and send events for it later through {@link #post}.
 *
 * <p>Over TCP the kernel does not say who the peer is: INIT carries the version and a
 * credential, which the server's {@link Login} turns into the peer. Until then the peer is
 * {@link Peer#UNKNOWN}, and anything but an accepted INIT - a command, a bad frame, a refused or missing
 * credential, another version - is answered by one ERROR and ends the session.
 */
public final class Session {
    /** The version of the protocol this daemon speaks. */
    public static final String VERSION = "1";

    /** Executes commands after INIT for a session; returns the events before the closing OK. */
    public interface Handler {
        List<Frame> handle(Code code, Frame command, Session session) throws CommandException;

        /**
         * The events before the closing OK of a command answered at once on the selector thread, or null
         * when it must go to {@link #handle} on a worker. Only for what takes no lock that a command holds
         * while it works, does no I/O and cannot block (a QUERY answered from a cache): every other
         * connection waits while it runs. It must answer exactly as {@link #handle} would.
         */
        default List<Frame> quick(Code code, Frame command, Session session) {
            return null;
        }

        /**
         * The answers of a command were handed to the socket ({@link #onCommand}'s, on the worker that ran
         * it): the handler's work that no answer waits for, done while the client reads.
         */
        default void answered(Session session) {
        }

        /** The session ended (QUIT, a fatal frame, or the client went away): drop what it had open. */
        default void closed(Session session) {
        }
    }

    /** Who a session over TCP is: INIT's credential, proven and admitted, or refused with the reason. */
    interface Login {
        /** May block (a credential service): runs on a worker, never on the selector thread. */
        Peer login(String credential) throws Authenticator.Refused;
    }

    /** Where a session's asynchronous events go; never blocks. */
    public interface Output {
        /**
         * Queues {@code frame} behind everything sent before; false when the client reads too slowly and
         * {@code force} is off (or the connection is gone), and then nothing was queued.
         */
        boolean post(Frame frame, boolean force);

        /** Whether the client closed its end (the server read it): no answer reaches it any more. */
        default boolean clientClosed() {
            return false;
        }
    }

    /**
     * Who is on the other end of the socket, from the kernel (SO_PEERCRED), or over TCP from the
     * {@link Authenticator} (its pid is 0 then: the process is on another host): the user and group names,
     * and where known the numeric uid and gid (-1 unknown) and pid (0 unknown); {@link #UNKNOWN} where the
     * platform does not say, and over TCP before the login.
     */
    public record Peer(String user, String group, long uid, long gid, long pid) {
        public static final Peer UNKNOWN = new Peer("", "", -1, -1, 0);

        public Peer(String user, String group) {
            this(user, group, -1, -1, 0);
        }

        public boolean isRoot() {
            return uid == 0 || user.equals("root");
        }
    }

    /**
     * A command refused with a reason and its {@link Category}: answered by ERROR, state unchanged. Open to
     * subclasses that let the daemon's own rooms tell one cause from another by type, never by the text.
     */
    public static class CommandException extends Exception {
        private static final long serialVersionUID = 1L;
        private final Category category;

        public CommandException(Category category, String message) {
            super(message, null, false, false);
            this.category = java.util.Objects.requireNonNull(category);
        }

        public Category category() {
            return category;
        }
    }

    private final Handler handler;
    /** Null when the kernel said who the peer is (Unix socket). */
    private final Login login;
    /** Set once: at construction, or by the accepted INIT of a session with a {@link #login}. */
    private volatile Peer peer;
    private volatile Output output = (frame, force) -> false;
    private boolean initialised;
    private volatile boolean closed;
    private boolean keepOpen;
    private boolean ended;
    /** TIDs of commands left open ({@link #keepOpen}) whose OK or ERROR has not been posted yet. */
    private final java.util.Set<Long> open = java.util.concurrent.ConcurrentHashMap.newKeySet();

    public Session(Handler handler, Peer peer) {
        this.handler = handler;
        this.login = null;
        this.peer = peer;
    }

    /** A session whose peer is no one until its INIT carries a credential that {@code login} accepts. */
    Session(Handler handler, Login login) {
        this.handler = handler;
        this.login = login;
        this.peer = Peer.UNKNOWN;
    }

    /** Connects the session to its connection's outgoing queue. */
    public void attach(Output out) {
        this.output = out;
    }

    /** Sends an event outside the answer of the current command (the event stream); see {@link Output}. */
    public boolean post(Frame frame, boolean force) {
        boolean queued = output.post(frame, force);
        if (frame.code() == Code.OK.value() || frame.code() == Code.ERROR.value()) {
            open.remove(frame.tid()); // the open command has its end (or the connection is gone)
        }
        return queued;
    }

    /** Whether a command is still open (an event stream): the connection is not idle then. */
    boolean hasOpenCommand() {
        return !open.isEmpty();
    }

    /** Called by the handler: the current command stays open, its OK or ERROR comes later. */
    public void keepOpen() {
        keepOpen = true;
    }

    /** The session is over (QUIT, or the connection is gone): tells the handler, once. */
    public void end() {
        closed = true;
        if (!ended) {
            ended = true;
            handler.closed(this);
        }
    }

    /** The kernel's word on the peer, or the one its credential proved; {@link Peer#UNKNOWN} before that. */
    public Peer peer() {
        return peer;
    }

    public boolean closed() {
        return closed;
    }

    /**
     * Whether the client is gone: the session is over, or the client closed its end of the connection
     * (a client that half-closes counts as gone). A command that would grant something to a client gone
     * before it is decided grants nothing (docs/protocol.md, "A client gone before the answer").
     */
    public boolean gone() {
        return closed || output.clientClosed();
    }

    /**
     * The answer to {@code command} when it can be given at once, on the selector thread, or null: it goes
     * to {@link #onCommand} on a worker. INIT of a peer the kernel named needs no login; after INIT the
     * {@link Handler#quick} says. QUIT (it ends what the session had open) and a TCP peer's INIT (its
     * credential) are never answered here.
     */
    List<Frame> quick(Frame command) {
        Code code = Code.of(command.code()).filter(Code::isCommand).orElse(null);
        if (code == Code.INIT && login == null) {
            return onCommand(command);
        }
        if (code == null || code == Code.INIT || code == Code.QUIT || !initialised) {
            return null;
        }
        List<Frame> events = handler.quick(code, command, this);
        if (events == null) {
            return null;
        }
        List<Frame> out = new ArrayList<>(events.size() + 1);
        out.addAll(events);
        out.add(ok(command.tid()));
        return out;
    }

    /** After {@link #onCommand}'s answers were handed to the socket: {@link Handler#answered}. */
    public void answered() {
        try {
            handler.answered(this);
        } catch (RuntimeException e) {
            Log.report("the work after an answer failed", e);
        }
    }

    /** The events answering one command, in order, the last OK or ERROR. */
    public List<Frame> onCommand(Frame command) {
        long tid = command.tid();
        Code code = Code.of(command.code()).filter(Code::isCommand).orElse(null);
        if (code == null) {
            String why = "unknown command code " + Hex.of(command.code(), 4);
            return login != null && !initialised ? refuse(tid, why, Category.MALFORMED)
                    : List.of(error(tid, why, Category.MALFORMED));
        }
        if (code == Code.INIT) {
            if (initialised) {
                return List.of(error(tid, "INIT was already received", Category.MALFORMED));
            }
            if (login != null) {
                return logIn(tid, command);
            }
            String version = command.args().size() == 1 ? command.text(0) : "(none)";
            if (!VERSION.equals(version)) {
                return List.of(error(tid, "protocol version " + version + " is not supported; rsmapd speaks version "
                        + VERSION, Category.MALFORMED));
            }
            initialised = true;
            return List.of(ok(tid));
        }
        if (!initialised) {
            return login == null ? List.of(error(tid, "INIT must come first", Category.MALFORMED))
                    : refuse(tid, "INIT with a credential must come first", Category.MALFORMED);
        }
        if (code == Code.QUIT) {
            end(); // the handler stops what the session had open (its OK first), then QUIT's OK
            return List.of(ok(tid));
        }
        List<Frame> out = new ArrayList<>();
        keepOpen = false;
        try {
            out.addAll(handler.handle(code, command, this));
            if (!keepOpen) {
                out.add(ok(tid));
            } else {
                open.add(tid);
            }
        } catch (CommandException e) {
            out.clear();
            out.add(error(tid, e.getMessage(), e.category()));
        } catch (RuntimeException e) {
            out.clear(); // the daemon never throws across the socket; its log keeps the trace
            Log.report(code + " (TID " + tid + ") failed", e);
            out.add(error(tid, "internal error: " + e, Category.INTERNAL));
        }
        keepOpen = false;
        return out;
    }

    /**
     * INIT over TCP: {@code INIT VERSION CREDENTIAL}. Every way it fails ends the session: until it is
     * accepted the peer is no one, and no one gets a second try on the same connection.
     */
    private List<Frame> logIn(long tid, Frame command) {
        String version = command.args().isEmpty() ? "(none)" : command.text(0);
        if (!VERSION.equals(version)) {
            return refuse(tid, "protocol version " + version + " is not supported; rsmapd speaks version " + VERSION,
                    Category.MALFORMED);
        }
        if (command.args().size() != 2 || command.text(1).isEmpty()) {
            return refuse(tid, "INIT over TCP carries the protocol version and a credential (INIT " + VERSION
                    + " CREDENTIAL); " + (command.args().size() > 2 ? "it had " + command.args().size() + " arguments"
                    : "none was given"), Category.MALFORMED);
        }
        try {
            peer = login.login(command.text(1));
        } catch (Authenticator.Refused e) {
            return refuse(tid, e.getMessage(), e.category());
        }
        initialised = true;
        return List.of(ok(tid));
    }

    /** One ERROR, and the session ends: the connection closes once it is written. */
    private List<Frame> refuse(long tid, String reason, Category category) {
        closed = true;
        return List.of(error(tid, reason, category));
    }

    /**
     * The ERROR answering a frame that could not be read; after a fatal one, or before the INIT of a
     * session that must log in, the session ends.
     */
    public Frame onBadFrame(FrameException e) {
        if (e.fatal() || login != null && !initialised) {
            closed = true;
        }
        return error(e.tid(), "bad frame: " + e.getMessage(), Category.MALFORMED);
    }

    public static Frame ok(long tid) {
        return Frame.of(tid, Code.OK.value());
    }

    /** {@code ERROR REASON CATEGORY}: a client of one argument reads the reason, a newer one decides by the category. */
    public static Frame error(long tid, String message, Category category) {
        return Frame.of(tid, Code.ERROR.value(), message, category.wire());
    }
}
