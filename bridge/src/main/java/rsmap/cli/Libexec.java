// Where the demo finds its helper programs: rsmap-hook, rsmap-starter and execd-stub.
package rsmap.cli;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The directories of the system property {@code rsmap.libexec} (':'-separated; the packaged launcher
 * sets /usr/libexec/rsmap), else beside the build's jar: bridge/target and native-stubs/target of the
 * source tree, then /usr/libexec/rsmap.
 */
final class Libexec {
    private Libexec() {
    }

    static List<Path> dirs() {
        List<Path> dirs = new ArrayList<>();
        String prop = System.getProperty("rsmap.libexec", "");
        for (String d : prop.split(":")) {
            if (!d.isEmpty()) {
                dirs.add(Path.of(d));
            }
        }
        if (dirs.isEmpty()) {
            try {
                Path here = Path.of(Libexec.class.getProtectionDomain().getCodeSource().getLocation().toURI());
                Path target = here.getParent(); // bridge/target, from classes/ or from rsmap.jar
                dirs.add(target);
                dirs.add(target.resolveSibling("..").resolve("native-stubs").resolve("target").normalize());
            } catch (URISyntaxException | RuntimeException e) {
                // no code source: only the installed place
            }
            dirs.add(Path.of("/usr/libexec/rsmap"));
        }
        return dirs;
    }

    static Path find(String name) throws Refused {
        for (Path d : dirs()) {
            Path p = d.resolve(name);
            if (Files.isExecutable(p)) {
                return p.toAbsolutePath();
            }
        }
        throw new Refused(name + " not found in " + dirs() + ": build it first ('mvn -B -q -DskipTests package') or "
                + "install the rsmap package");
    }
}
