// The cluster's authority for GridEngineIT: munged with a key of its own and an rsmapd of role authority, to
// which the host's rsmapd registers its attributes; the server JSV asks it (rsmap place) for RSMAP_FILTER and
// RSMAP_ALTERNATIVES. Started and stopped by GridEngineCluster, like its other daemons.
package rsmap.gridengine;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import rsmap.daemon.RealCluster;

final class Authority {
    /** What the host's rsmapd.conf adds to register with the authority. */
    record Link(Path mungeSocket, int port, Path socket) {
        List<String> hostLines() {
            return List.of("authority = 127.0.0.1:" + port, "munge_socket = " + mungeSocket);
        }
    }

    private Authority() {
    }

    /** munged and the authority under {@code dir}, through {@code starter} (which keeps the processes to stop). */
    static Link start(Path dir, GridEngineCluster starter) throws IOException, InterruptedException {
        Path munge = Files.createDirectories(dir.resolve("munge"));
        Files.setPosixFilePermissions(munge, PosixFilePermissions.fromString("rwxr-xr-x"));
        starter.mustRun(List.of("mungekey", "--create", "--force", "--keyfile=" + munge.resolve("munge.key")));
        Path mungeSocket = munge.resolve("socket");
        starter.spawn("munged", List.of("munged", "--foreground", "--force", "--socket=" + mungeSocket,
                "--key-file=" + munge.resolve("munge.key"), "--pid-file=" + munge.resolve("munged.pid"),
                "--seed-file=" + munge.resolve("seed"), "--log-file=" + dir.resolve("log/munged.log")));
        starter.awaitFile(mungeSocket, "munged");
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Files.writeString(dir.resolve("authority.conf"), String.join("\n", "role = authority", "complexes = complexes",
                "listen = 127.0.0.1:" + port, "socket = authority.sock", "state_dir = authority-state",
                "munge_socket = " + mungeSocket, "reconcile_interval = 0") + "\n");
        starter.spawn("authority", RealCluster.rsmapd(dir.resolve("authority.conf")));
        starter.awaitFile(dir.resolve("authority.sock"), "the authority");
        return new Link(mungeSocket, port, dir.resolve("authority.sock"));
    }
}
