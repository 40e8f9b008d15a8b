// The example host inside the jar (examples/ of the source tree), and the temporary directories of the
// programs that run it: rsmap demo and rsmapd --train-cds.
package rsmap.daemon;

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

    /** Removes {@code dir} and everything below it. */
    public static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
