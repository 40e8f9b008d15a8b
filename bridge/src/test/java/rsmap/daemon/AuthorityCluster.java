// Test support: a real authority (rsmapd as a process, MUNGE over loopback TCP) in a fresh folder of mode
// 0755, and in-process host daemons that register with it; closing stops hosts, authority and munged, in
// that order, and removes the folder.
package rsmap.daemon;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import rsmap.munge.MungeD;
import rsmap.wire.Ports;

final class AuthorityCluster implements AutoCloseable {
    /** Where the authority and every host keep their files. */
    final Path shared;
    private final MungeD munged;
    private final int port;
    private final List<Daemon> hosts = new ArrayList<>();
    private Process authority;

    private AuthorityCluster(MungeD munged, Path shared) throws java.io.IOException {
        this.munged = munged;
        this.shared = shared;
        this.port = Ports.free();
    }

    /**
     * Root (the hooks and the daemons' trust need it; without, a test skips, under CI=true it fails), munged,
     * and the authority of the global map lic=1(la) on a free port.
     */
    static AuthorityCluster start(String prefix) throws Exception {
        ExecdStubIT.jobUser();
        MungeD munged = MungeD.start();
        AuthorityCluster cluster;
        try {
            cluster = new AuthorityCluster(munged, Files.createTempDirectory(prefix, PosixFilePermissions
                    .asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x"))));
        } catch (Throwable e) {
            munged.close();
            throw e;
        }
        try {
            Path dir = cluster.shared.resolve("authority");
            AuthorityTest.authorityConfig(dir, cluster.port, "lic=1(la)", "munge_socket = " + munged.socket());
            cluster.authority = RsmapdProcess.start(dir.resolve("rsmapd.conf"), dir.resolve("rsmapd.sock"),
                    dir.resolve("log"));
            return cluster;
        } catch (Throwable e) {
            cluster.close();
            throw e;
        }
    }

    /** The authority's socket, for `rsmap place --socket` and `rsmap status --cluster --socket`. */
    String socket() {
        return shared.resolve("authority").resolve("rsmapd.sock").toString();
    }

    /** Starts host {@code name}, serving {@code complexValues} and registering with the authority; {@code more} settings. */
    Config host(String name, String complexValues, String... more) throws Exception {
        List<String> settings = new ArrayList<>(List.of("host = " + name, "authority = 127.0.0.1:" + port,
                "munge_socket = " + munged.socket(), "reconcile_interval = 0"));
        settings.addAll(List.of(more));
        Config c = TestDaemon.config(shared.resolve(name), complexValues, settings.toArray(new String[0]));
        hosts.add(TestDaemon.start(c));
        return c;
    }

    @Override
    public void close() throws Exception {
        for (Daemon d : hosts) {
            d.close();
        }
        if (authority != null) {
            authority.destroyForcibly().waitFor();
        }
        munged.close();
        try (Stream<Path> all = Files.walk(shared)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
