// The authority's check of a TCP peer (issue 14): a munge credential of root or the daemon user, for this purpose.
package rsmap.munge;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import rsmap.wire.Authenticator;
import rsmap.wire.Session;

/**
 * Accepts a credential that munged decodes (same key, within its TTL, first use) when it was encoded by
 * uid 0 or by the daemon user, and seals exactly the expected purpose string; everything else is refused
 * with one line that says which check failed. The purpose binds a credential to what it was made for: a
 * credential some other MUNGE client made for its own server (Slurm's, say) is not a ticket here, and with
 * {@link #purpose(String)} naming the authority host, not at another authority either.
 *
 * <p>Fails closed: a munged that cannot be reached refuses every credential (and says so) rather than
 * letting one through unchecked.
 */
public final class MungeAuthenticator implements Authenticator {
    /** The payload a host's credential seals, alone or followed by a space and the authority's host name. */
    public static final String PURPOSE = "rsmapd-authority";
    /** Far above a credential with a host name in its payload (about 200 characters); checked before decoding. */
    public static final int MAX_CREDENTIAL = 4096;

    private final Munge munge;
    private final String daemonUser;
    private final long daemonUid;
    private final String purpose;
    private final byte[] expected;
    private final Accounts accounts;

    /**
     * Checks credentials with {@code munge}, accepting root and {@code daemonUser} (its uid resolved now,
     * from /etc/passwd, else {@code id -u}), with payload {@code purpose}.
     *
     * @throws IllegalArgumentException when {@code daemonUser} is unknown here (fail closed: a typo in the
     *         configuration must not leave the authority accepting root alone without saying so)
     */
    public MungeAuthenticator(Munge munge, String daemonUser, String purpose) {
        this(munge, daemonUser, purpose, Accounts.SYSTEM);
    }

    MungeAuthenticator(Munge munge, String daemonUser, String purpose, Accounts accounts) {
        this.munge = Objects.requireNonNull(munge, "munge");
        this.daemonUser = Objects.requireNonNull(daemonUser, "daemonUser");
        this.purpose = Objects.requireNonNull(purpose, "purpose");
        this.accounts = accounts;
        this.expected = purpose.getBytes(StandardCharsets.UTF_8);
        this.daemonUid = accounts.uid(daemonUser).orElseThrow(() -> new IllegalArgumentException(
                "daemon user '" + daemonUser + "' is unknown here (not in /etc/passwd, and id -u does not know it)"));
    }

    /** The purpose string for credentials to the authority on {@code host} ("" or null: {@link #PURPOSE} alone). */
    public static String purpose(String host) {
        return host == null || host.isEmpty() ? PURPOSE : PURPOSE + " " + host;
    }

    @Override
    public Session.Peer authenticate(String credential) throws Refused {
        if (credential == null || credential.isEmpty()) {
            throw new Refused("no munge credential");
        }
        if (credential.length() > MAX_CREDENTIAL) {
            throw new Refused("munge credential too long (" + credential.length() + " characters, at most "
                    + MAX_CREDENTIAL + ")");
        }
        Munge.Credential c;
        try {
            c = munge.decode(credential);
        } catch (MungeException e) {
            throw new Refused(refusal(e), switch (e.kind()) { // munged's trouble: try again later
                case SOCKET, OTHER -> rsmap.wire.Category.UNAVAILABLE;
                default -> rsmap.wire.Category.DENIED;
            });
        }
        if (c.uid() != 0 && c.uid() != daemonUid) {
            String name = accounts.user(c.uid()).map(n -> " ('" + n + "')").orElse("");
            String who = daemonUid == 0 ? "root" : "root or '" + daemonUser + "'";
            throw new Refused("munge credential of uid " + c.uid() + name + ": only " + who + " may connect");
        }
        // Not echoed: the payload is the peer's text, and the expected one is what it needs to learn.
        if (!Arrays.equals(c.payload(), expected)) {
            throw new Refused("munge credential for another purpose (not '" + purpose + "')");
        }
        String user = c.uid() == 0 ? accounts.user(0).orElse("root") : daemonUser;
        String group = accounts.group(c.gid()).orElse(Long.toString(c.gid()));
        return new Session.Peer(user, group, c.uid(), c.gid(), 0);
    }

    /** The one line for a credential munged did not accept. */
    static String refusal(MungeException e) {
        return switch (e.kind()) {
            case INVALID -> "munge credential invalid (forged, or another key)";
            case EXPIRED -> "munge credential expired";
            case REWOUND -> "munge credential rewound (encoded in this host's future: are the clocks apart?)";
            case REPLAYED -> "munge credential replayed";
            case UNAUTHORIZED -> "munge credential restricted to another uid or gid";
            // munged's trouble, not the peer's: still a refusal, never a pass.
            case SOCKET, OTHER -> "munge credential not checked: " + e.getMessage();
        };
    }

    @Override
    public String toString() {
        return "MungeAuthenticator[" + munge.socket() + ", root or " + daemonUser + " (uid " + daemonUid + "), '"
                + purpose + "']";
    }
}
