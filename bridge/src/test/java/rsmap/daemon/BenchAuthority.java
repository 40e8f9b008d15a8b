// The server side of the TcpConnections benchmark in its "grant" mode: a real authority (the
// Daemon with role = authority, its journal forced per grant) on an ephemeral loopback port.
package rsmap.daemon;

import java.nio.file.Files;
import java.nio.file.Path;
import rsmap.daemon.authority.AuthorityTest;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.HostAuth;
import rsmap.wire.Authenticator;
import rsmap.wire.Ports;
import rsmap.wire.Session;

/**
 * Prints {@code listening PORT}, serves until its stdin closes. A credential {@code host N} logs in as root
 * (a host daemon): the login is not what is measured (MungeRoundTrip measures MUNGE). Args: {@code SEATS}
 * (default 256), the global pool {@code lic}. The authority's JOB_START is what a host sends for the
 * global part of its job's request: {@code {"host":..,"job":..,"request":"lic=1"}}.
 */
public final class BenchAuthority {
    private BenchAuthority() {
    }

    public static void main(String[] args) throws Exception {
        int seats = args.length > 0 ? Integer.parseInt(args[0]) : 256;
        HostAuth auth = new HostAuth() {
            @Override
            public java.util.function.Supplier<String> credential(Config host) {
                throw new UnsupportedOperationException("an authority only");
            }

            @Override
            public Authenticator authenticator(Config authority) {
                Session.Peer root = new Session.Peer("root", "root", 0, 0, 0);
                return credential -> {
                    if (!credential.startsWith("host ")) {
                        throw new Authenticator.Refused("not a host: " + credential);
                    }
                    return root;
                };
            }
        };
        Path dir = Files.createTempDirectory("rsmap-bench-authority");
        StringBuilder pool = new StringBuilder("lic=" + seats + "(");
        for (int i = 0; i < seats; i++) {
            pool.append(i == 0 ? "" : " ").append('s').append(i);
        }
        int port = Ports.free();
        Config config = AuthorityTest.authorityConfig(dir, port, pool.append(')').toString(), "idle_timeout = 3600");
        try (Daemon d = TestDaemon.start(config, auth)) {
            System.out.println("listening " + port);
            System.out.flush();
            while (System.in.read() >= 0) {
                // serve until the harness closes our stdin
            }
        } finally {
            Trees.delete(dir);
        }
    }
}
