// Who may do what: the one place where a peer's credentials (SO_PEERCRED) are judged.
package rsmap.daemon.state;

import java.util.Set;
import rsmap.wire.Code;
import rsmap.wire.Session;

/**
 * One table: JOB_START, JOB_END and RELOAD (the commands of execd's hooks and of the admin), and a host's
 * REGISTER, HOST_EVENT and RECONCILE to its authority, and DRAIN and UNDRAIN, are for root and {@code admin_user}; every other command is for anyone, and what it shows or touches of a job is for
 * its owner, root and the admin ({@link #mayQuery}). JOB_ENTER of a job that holds nothing is for anyone:
 * it only narrows what the caller reaches. The server's budget exempts the same privileged peers.
 */
public final class Access {
    /** The commands for root and the admin only. */
    static final Set<Code> PRIVILEGED = Set.of(Code.JOB_START, Code.JOB_END, Code.RELOAD, Code.REGISTER, Code.HOST_EVENT,
            Code.RECONCILE, Code.JOB_KEY, Code.DRAIN, Code.UNDRAIN);

    private final String adminUser;
    private final String daemonUser;

    public Access(String adminUser) {
        this(adminUser, "root");
    }

    /**
     * With the daemon's own user: a host daemon proves it to its authority with MUNGE, and on
     * a host it is the user the hooks already trust.
     */
    public Access(String adminUser, String daemonUser) {
        this.adminUser = adminUser;
        this.daemonUser = daemonUser;
    }

    /** Root, the admin user or the daemon's user. */
    public boolean privileged(Session.Peer peer) {
        return peer.isRoot() || peer.user().equals(adminUser) || peer.user().equals(daemonUser);
    }

    /** Whether {@code peer} may see and enter {@code job}: its owner, root or the admin. */
    public boolean mayQuery(Session.Peer peer, Job job) {
        return privileged(peer) || !job.user().isEmpty() && job.user().equals(peer.user());
    }

    /** Refuses a command of the {@link #PRIVILEGED} table to anyone else. */
    public void authorise(Code code, Session.Peer peer) throws Refusal {
        if (PRIVILEGED.contains(code) && !privileged(peer)) {
            throw Refusal.denied(code + " is for root or the admin user " + adminUser + ", not '"
                    + peer.user() + "'");
        }
    }
}
