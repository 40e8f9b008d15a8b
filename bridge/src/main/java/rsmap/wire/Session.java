// The protocol rules of one connection: INIT first with a matching version, one OK or ERROR per
// command with its TID, never an exception across the socket.
package rsmap.wire;

import java.util.ArrayList;
import java.util.List;

/**
 * Seed 004, "Proxy Protocol": one command may cause several events; all carry the command's TID; the
 * last is exactly one OK or ERROR. INIT carries the protocol version and must come first; a mismatch is
 * an ERROR naming both versions. QUIT is answered OK and ends the session. Commands other than these
 * go to the {@link Handler}, whose failures become ERROR events. A handler may leave its command open
 * ({@link #keepOpen}, START_EVENTS) and send events for it later through {@link #post}.
 */
public final class Session {
    /** The version of the protocol this daemon speaks. */
    public static final String VERSION = "1";

    /** Executes commands after INIT for a session; returns the events before the closing OK. */
    public interface Handler {
        List<Frame> handle(Code code, Frame command, Session session) throws CommandException;

        /** The session ended (QUIT, a fatal frame, or the client went away): drop what it had open. */
        default void closed(Session session) {
        }
    }

    /** Where a session's asynchronous events go; never blocks. */
    public interface Output {
        /**
         * Queues {@code frame} behind everything sent before; false when the client reads too slowly and
         * {@code force} is off (or the connection is gone), and then nothing was queued.
         */
        boolean post(Frame frame, boolean force);
    }

    /**
     * Who is on the other end of the socket, from the kernel (SO_PEERCRED): the user and group names, and
     * where known the numeric uid and gid (-1 unknown) and pid (0 unknown); {@link #UNKNOWN} where the
     * platform does not say.
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

    /** A command refused with a reason: answered by ERROR, state unchanged. */
    public static final class CommandException extends Exception {
        private static final long serialVersionUID = 1L;

        public CommandException(String message) {
            super(message, null, false, false);
        }
    }

    private final Handler handler;
    private final Peer peer;
    private volatile Output output = (frame, force) -> false;
    private boolean initialised;
    private volatile boolean closed;
    private boolean keepOpen;
    private boolean ended;
    /** TIDs of commands left open ({@link #keepOpen}) whose OK or ERROR has not been posted yet. */
    private final java.util.Set<Long> open = java.util.concurrent.ConcurrentHashMap.newKeySet();

    public Session(Handler handler, Peer peer) {
        this.handler = handler;
        this.peer = peer;
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

    public Peer peer() {
        return peer;
    }

    public boolean closed() {
        return closed;
    }

    /** The events answering one command, in order, the last OK or ERROR. */
    public List<Frame> onCommand(Frame command) {
        long tid = command.tid();
        Code code = Code.of(command.code()).filter(Code::isCommand).orElse(null);
        if (code == null) {
            return List.of(error(tid, String.format("unknown command code %04x", command.code())));
        }
        if (code == Code.INIT) {
            if (initialised) {
                return List.of(error(tid, "INIT was already received"));
            }
            String version = command.args().size() == 1 ? command.text(0) : "(none)";
            if (!VERSION.equals(version)) {
                return List.of(error(tid, "protocol version " + version + " is not supported; rsmapd speaks version "
                        + VERSION));
            }
            initialised = true;
            return List.of(ok(tid));
        }
        if (!initialised) {
            return List.of(error(tid, "INIT must come first"));
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
            out.add(error(tid, e.getMessage()));
        } catch (RuntimeException e) {
            out.clear(); // the daemon never throws across the socket
            out.add(error(tid, "internal error: " + e));
        }
        keepOpen = false;
        return out;
    }

    /** The ERROR answering a frame that could not be read; after a fatal one the session ends. */
    public Frame onBadFrame(FrameException e) {
        if (e.fatal()) {
            closed = true;
        }
        return error(e.tid(), "bad frame: " + e.getMessage());
    }

    public static Frame ok(long tid) {
        return Frame.of(tid, Code.OK.value());
    }

    public static Frame error(long tid, String message) {
        return Frame.of(tid, Code.ERROR.value(), message);
    }
}
