// Who is on the other end of a TCP connection: a credential from INIT turned into the session's peer.
package rsmap.wire;

/** Proves a TCP peer's identity (issue 14): the kernel cannot say, as SO_PEERCRED does on the Unix socket. */
public interface Authenticator {
    /** The peer {@code credential} proves; refused with a one-line reason otherwise. */
    Session.Peer authenticate(String credential) throws Authenticator.Refused;

    /**
     * A credential that proves nothing acceptable: answered by ERROR (category {@code denied}, or the one
     * given: {@code unavailable} when the credential service cannot be asked), and the connection closed.
     */
    public static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        private final Category category;

        public Refused(String message) {
            this(message, Category.DENIED);
        }

        public Refused(String message, Category category) {
            super(message, null, false, false);
            this.category = java.util.Objects.requireNonNull(category);
        }

        public Category category() {
            return category;
        }
    }
}
