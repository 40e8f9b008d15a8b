// The example host inside the jar (examples/ of the source tree), and the temporary directories of the
// programs that run it: rsmap demo and rsmapd --train-cds.
package rsmap.daemon.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Bundled examples and the cleanup of what was made from them. */
public final class Bundled {
    private Bundled() {
    }

    /** The text of examples/{@code name} as the build put it into the jar. */
    public static String example(String name) throws IOException {
        try (InputStream in = Bundled.class.getResourceAsStream("/rsmap/examples/" + name)) {
            if (in == null) {
                throw new IOException("the bundled example " + name + " is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /**
     * Writes {@code dir/complexes} and {@code dir/rsmapd.conf}: a daemon for the example host node01 (and
     * the global host's licences) on a private socket and state in {@code dir}, the current user as its
     * admin, devices through {@code backend}, the jobs' CDI specs in {@code dir/cdi}. Returns the configuration file.
     */
    public static Path exampleDaemon(Path dir, String backend) throws IOException {
        Files.writeString(dir.resolve("complexes"), example("complexes"));
        return Files.writeString(dir.resolve("rsmapd.conf"), String.join("\n", "complexes = complexes", "host = node01",
                "complex_values = " + example("node01.complex_values").strip(),
                "global_complex_values = " + example("global.complex_values").strip(), "socket = rsmapd.sock",
                "socket_mode = 0600", "state_dir = state", "device_backend = " + backend,
                "admin_user = " + System.getProperty("user.name"), "reconcile_interval = 0",
                "cdi_dir = cdi", "")); // the jobs' CDI specs beside the state, never in the host's /var/run/cdi
    }

    /** Removes {@code dir} and everything below it. */
    public static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
