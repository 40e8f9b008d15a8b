// The protocol rules of one connection: INIT first with a matching version, one OK or ERROR per
// command with its TID, never an exception across the socket.
package rsmap.wire;

import java.util.ArrayList;
import java.util.List;

/**
 * Seed 004, "Proxy Protocol": one command may cause several events; all carry the command's TID; the
 * last is exactly one OK or ERROR. INIT carries the protocol version and must come first; a mismatch is
 * an ERROR naming both versions. QUIT is answered OK and ends the session. Commands other than these
 * go to the {@link Handler}, whose failures become ERROR events.
 */
public final class Session {
    /** The version of the protocol this daemon speaks. */
    public static final String VERSION = "1";

    /** Executes commands after INIT for a peer; returns the events before the closing OK. */
    public interface Handler {
        List<Frame> handle(Code code, Frame command, Peer peer) throws CommandException;
    }

    /**
     * Who is on the other end of the socket, from the kernel (SO_PEERCRED): the user and group names;
     * {@link #UNKNOWN} where the platform does not say.
     */
    public record Peer(String user, String group) {
        public static final Peer UNKNOWN = new Peer("", "");

        public boolean isRoot() {
            return user.equals("root");
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
    private boolean initialised;
    private boolean closed;

    public Session(Handler handler, Peer peer) {
        this.handler = handler;
        this.peer = peer;
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
            closed = true;
            return List.of(ok(tid));
        }
        List<Frame> out = new ArrayList<>();
        try {
            out.addAll(handler.handle(code, command, peer));
            out.add(ok(tid));
        } catch (CommandException e) {
            out.clear();
            out.add(error(tid, e.getMessage()));
        } catch (RuntimeException e) {
            out.clear(); // the daemon never throws across the socket
            out.add(error(tid, "internal error: " + e));
        }
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
