// Test support: a private dbus-daemon on a unix socket in a temp dir, with a policy that allows everything.
package rsmap.device.systemd;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real {@code dbus-daemon}, started per test class and killed by {@link #close()}. The bus type is
 * {@code session} so no system policy applies; the socket lives in a fresh temp dir.
 */
final class PrivateBus implements AutoCloseable {
    private final Path dir;
    private final Process daemon;
    private final String address;

    private PrivateBus(Path dir, Process daemon, String address) {
        this.dir = dir;
        this.daemon = daemon;
        this.address = address;
    }

    /**
     * Skips a test where dbus-daemon is not installed, saying so; under CI=true it fails instead
     * (.ci/run installs the Debian package dbus).
     */
    static void requireDaemon() {
        boolean present = Stream.of(System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":"))
                .anyMatch(d -> Files.isExecutable(Path.of(d, "dbus-daemon")));
        if (!present && "true".equals(System.getenv("CI"))) {
            throw new AssertionError("CI=true but dbus-daemon is not on PATH (Debian package dbus)");
        }
        assumeTrue(present, "needs dbus-daemon on PATH (Debian package dbus) for a private bus");
    }

    static PrivateBus start() throws IOException, InterruptedException {
        requireDaemon();
        Path dir = Files.createTempDirectory("rsmap-dbus");
        Path socket = dir.resolve("bus");
        Path config = dir.resolve("bus.conf");
        Files.writeString(config, "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                + " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                + "<busconfig>\n"
                + "  <type>session</type>\n"
                + "  <listen>unix:path=" + socket + "</listen>\n"
                + "  <auth>EXTERNAL</auth>\n"
                + "  <policy context=\"default\">\n"
                + "    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n"
                + "    <allow eavesdrop=\"true\"/>\n"
                + "    <allow own=\"*\"/>\n"
                + "  </policy>\n"
                + "</busconfig>\n", StandardCharsets.UTF_8);
        Process daemon = new ProcessBuilder("dbus-daemon", "--config-file=" + config, "--print-address", "--nofork")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(daemon.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                return null;
            }
        });
        String address;
        try {
            address = line.get(20, TimeUnit.SECONDS);
        } catch (Exception e) {
            address = null;
        }
        if (address == null || address.isBlank()) {
            daemon.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            deleteTree(dir);
            throw new IOException("dbus-daemon printed no address (exit " + (daemon.isAlive() ? "-" : daemon.exitValue()) + ")");
        }
        return new PrivateBus(dir, daemon, address.trim());
    }

    String address() {
        return address;
    }

    @Override
    public void close() throws IOException, InterruptedException {
        daemon.destroy();
        if (!daemon.waitFor(10, TimeUnit.SECONDS)) {
            daemon.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        deleteTree(dir);
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
