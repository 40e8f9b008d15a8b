// Test support: the tests' one recursive delete - a folder and everything below it, deepest first, links
// removed and never followed - for every cell, daemon folder and benchmark run that cleans up after itself.
package rsmap.daemon;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

public final class Trees {
    private Trees() {
    }

    /** Removes {@code dir} and everything below it; an absent {@code dir} is fine. */
    public static void delete(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** The same in a teardown that must go on: what could not be removed is said on stderr, for {@code who}. */
    public static void deleteOrSay(Path dir, String who) {
        try {
            delete(dir);
        } catch (IOException | RuntimeException e) {
            System.err.println(who + ": removing " + dir + ": " + e);
        }
    }
}
