// The server side of the TcpConnections benchmark: a SocketServer on TCP alone, in a JVM of its own with
// bin/rsmapd's options, whose QUERY is answered by a bare OK (the authority's commands come later).
package rsmap.bench;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import rsmap.wire.Authenticator;
import rsmap.wire.Session;
import rsmap.wire.SocketServer;

/**
 * Prints {@code listening PORT} once bound on an ephemeral port of 127.0.0.1, serves until its stdin
 * closes. A credential {@code host N} logs in as the daemon user {@code rsmap} (privileged, as on an
 * authority); args: {@code [AUTH_MICROS]}, time the fake authenticator spends per login, as munged would
 * (default 0: the login is not what is measured).
 */
public final class TcpServer {
    private TcpServer() {
    }

    public static void main(String[] args) throws Exception {
        long authMicros = args.length > 0 ? Long.parseLong(args[0]) : 0;
        Session.Peer daemonUser = new Session.Peer("rsmap", "rsmap", 990, 990, 0);
        Authenticator hosts = credential -> {
            if (!credential.startsWith("host ")) {
                throw new Authenticator.Refused("not a host: " + credential);
            }
            if (authMicros > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(authMicros * 1000);
            }
            return daemonUser;
        };
        Session.Handler handler = (code, command, session) -> List.of();
        try (SocketServer server = SocketServer.builder(() -> handler)
                .tcp(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), hosts)
                .privileged(p -> p.isRoot() || p.user().equals("rsmap")).start()) {
            System.out.println("listening " + server.tcpAddress().getPort());
            System.out.flush();
            while (System.in.read() >= 0) {
                // serve until the harness closes our stdin
            }
        }
    }
}
