// Test support: a session of a given peer (as the kernel would name it) talking to a daemon directly.
package rsmap.daemon;

import java.util.List;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

final class DaemonSessions {
    private DaemonSessions() {
    }

    /** An initialised session of {@code user} (uid, pid as SO_PEERCRED would say) whose events go to {@code events}. */
    static Session as(Daemon daemon, String user, long uid, long pid, List<Frame> events) {
        Session s = new Session((code, command, session) -> daemon.handle(code, command, session),
                new Session.Peer(user, user, uid, uid, pid));
        s.attach((frame, force) -> events.add(frame));
        s.onCommand(Frame.of(1, Code.INIT.value(), Session.VERSION));
        return s;
    }
}
