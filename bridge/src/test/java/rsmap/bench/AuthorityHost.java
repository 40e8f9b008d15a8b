// Benchmark support: a host rsmapd whose authority is a second rsmapd, both the packaged bin/rsmapd in a folder
// of their own, the host's one link authenticated by a real munged of a fresh key; and the job starts timed on it.
package rsmap.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import rsmap.munge.MungeD;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Ports;

/** {@link #close()}: the host, then the authority (SIGTERM each), then munged; the folder is removed. */
record AuthorityHost(Path dir, MungeD munged, Rsmapd authority, Rsmapd host) implements AutoCloseable {
    /**
     * munged, then the authority of {@code global} on a free loopback port, then host node01 serving
     * {@code values} with that authority; each daemon started once it said READY=1.
     */
    static AuthorityHost start(String prefix, String global, String values) throws Exception {
        Path dir = Files.createTempDirectory(prefix);
        int port = Ports.free();
        MungeD munged = null;
        Rsmapd authority = null;
        try {
            munged = MungeD.start();
            Rsmapd.configureAuthority(dir.resolve("authority"), global, port, "munge_socket = " + munged.socket());
            Rsmapd.configure(dir.resolve("host"), values, "authority = 127.0.0.1:" + port,
                    "munge_socket = " + munged.socket());
            authority = Rsmapd.start(dir.resolve("authority"));
            return new AuthorityHost(dir, munged, authority, Rsmapd.start(dir.resolve("host")));
        } catch (Exception | Error e) {
            if (authority != null) {
                authority.close();
            }
            if (munged != null) {
                munged.close();
            }
            rsmap.daemon.Trees.delete(dir);
            throw e;
        }
    }

    /** JOB_START of {@code job} by user bench, asking {@code request}. */
    static Frame jobStart(long tid, String job, String request) {
        return Frame.of(tid, Code.JOB_START.value(), "{\"job\":\"" + job + "\",\"user\":\"bench\",\"request\":\""
                + request + "\"}");
    }

    /** A benchmark stops at the first answer that does not end in OK: its figures would time something else. */
    static void expectOk(List<Frame> answer) {
        if (answer.isEmpty() || answer.get(answer.size() - 1).code() != Code.OK.value()) {
            throw new IllegalStateException("not OK: " + answer);
        }
    }

    @Override
    public void close() throws IOException {
        try {
            try {
                host.close();
            } finally {
                authority.close(); // whatever the host's close did
            }
        } finally {
            munged.close();
            rsmap.daemon.Trees.delete(dir);
        }
    }
}
