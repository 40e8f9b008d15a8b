// The second half of admitting a TCP peer: INIT's credential proven by the Authenticator on a
// worker, then the peer judged as Admission judges a Unix one at accept - privilege, the per-user limit.
package rsmap.wire;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import rsmap.log.Log;

/**
 * One per TCP listener. Fails closed: an authenticator that throws, or names no one, refuses; a
 * connection closed while its credential was checked (the login timeout) keeps nothing it was given.
 */
final class TcpLogin {
    private final Authenticator authenticator;
    private final Predicate<Session.Peer> privileged;
    private final Budget budget;
    private final AtomicLong refused = new AtomicLong();

    TcpLogin(Authenticator authenticator, Predicate<Session.Peer> privileged, Budget budget) {
        this.authenticator = authenticator;
        this.privileged = privileged;
        this.budget = budget;
    }

    /** Logins refused since start: credentials refused, and peers over their user's limit. */
    long refused() {
        return refused.get();
    }

    /** The peer {@code credential} proves, admitted on {@code c}; refused with the reason it is told otherwise. */
    Session.Peer login(Connection c, String credential) throws Authenticator.Refused {
        try {
            Session.Peer peer = authenticate(credential);
            boolean priv = privileged.test(peer);
            Object user = null;
            if (!priv) {
                user = Budget.bucket(peer);
                if (!budget.open(user)) {
                    throw new Authenticator.Refused(budget.tooMany(peer), Category.BUSY);
                }
            }
            if (!c.adopt(priv, user)) {
                if (user != null) {
                    budget.release(user);
                }
                throw new Authenticator.Refused("the connection was closed while its credential was checked");
            }
            return peer;
        } catch (Authenticator.Refused e) {
            refused.incrementAndGet();
            throw e;
        } finally {
            if (c.stopAwaitingLogin()) {
                budget.loginEnded(c.loginSource());
            }
        }
    }

    private Session.Peer authenticate(String credential) throws Authenticator.Refused {
        Session.Peer peer;
        try {
            peer = authenticator.authenticate(credential);
        } catch (RuntimeException e) { // a bug in the authenticator refuses; it never lets anyone in
            Log.report("the authenticator failed", e);
            throw new Authenticator.Refused("the credential could not be checked: " + e, Category.INTERNAL);
        }
        if (peer == null || peer.equals(Session.Peer.UNKNOWN)) {
            throw new Authenticator.Refused("the credential could not be checked: it names no one", Category.INTERNAL);
        }
        return peer;
    }
}
