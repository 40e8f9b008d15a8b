// How a host daemon proves who it is to its authority, and how the authority checks it: MUNGE,
// the credential service HPC sites already run for Slurm. One place, so that tests can put another way.
package rsmap.daemon.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import rsmap.munge.Munge;
import rsmap.munge.MungeAuthenticator;
import rsmap.munge.MungeException;
import rsmap.wire.Authenticator;

/** The two sides of a host's login at its authority. */
public interface HostAuth {
    /** A fresh credential for each connect (a MUNGE credential is good for one decode: replay is refused). */
    Supplier<String> credential(Config host) throws IOException;

    /** The authority's check of a credential; fails with one line when it cannot check any. */
    Authenticator authenticator(Config authority) throws IOException;

    /**
     * MUNGE through libmunge: the host seals {@link MungeAuthenticator#PURPOSE} with its daemon's uid, the
     * authority accepts root and its own daemon_user, within the credential's TTL, once.
     */
    HostAuth MUNGE = new HostAuth() {
        @Override
        public Supplier<String> credential(Config host) throws IOException {
            Munge munge = open(host);
            return () -> {
                try {
                    return munge.encode(MungeAuthenticator.PURPOSE.getBytes(StandardCharsets.UTF_8));
                } catch (MungeException e) {
                    throw new IllegalStateException("munge_socket " + host.mungeSocket() + ": cannot make a "
                            + "credential: " + e.getMessage(), e);
                }
            };
        }

        @Override
        public Authenticator authenticator(Config authority) throws IOException {
            try {
                return new MungeAuthenticator(open(authority), authority.daemonUser(), MungeAuthenticator.PURPOSE);
            } catch (IllegalArgumentException e) {
                throw new IOException(e.getMessage(), e);
            }
        }

        private Munge open(Config c) throws IOException {
            try {
                return Munge.open(c.mungeSocket());
            } catch (MungeException e) {
                throw new IOException(e.getMessage(), e);
            }
        }
    };
}
