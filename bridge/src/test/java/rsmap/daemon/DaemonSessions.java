// Test support: a session of a given peer (as the kernel would name it) talking to a daemon directly.
package rsmap.daemon;

import java.util.List;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

public final class DaemonSessions {
    private DaemonSessions() {
    }

    /** An initialised session of {@code user} (uid, pid as SO_PEERCRED would say) whose events go to {@code events}. */
    public static Session as(Daemon daemon, String user, long uid, long pid, List<Frame> events) {
        Session s = new Session(new Session.Handler() {
            @Override
            public List<Frame> handle(Code code, Frame command, Session session) throws Session.CommandException {
                return daemon.handle(code, command, session);
            }

            @Override
            public void answered(Session session) {
                daemon.answered();
            }

            @Override
            public void closed(Session session) {
                daemon.closed(session);
            }
        }, new Session.Peer(user, user, uid, uid, pid));
        s.attach((frame, force) -> events.add(frame));
        s.onCommand(Frame.of(1, Code.INIT.value(), Session.VERSION));
        return s;
    }

    /** {@code command}'s answers, and then what the server does once it has sent them ({@link Session#answered}). */
    static List<Frame> answered(Session s, Frame command) {
        List<Frame> answers = s.onCommand(command);
        s.answered();
        return answers;
    }
}
