// The two packages the build left in target/, and what dpkg-deb and rpm say about them.
package rsmap.packaging;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

final class Packages {
    static final Path TARGET = Path.of("target").toAbsolutePath();

    private Packages() {
    }

    /** One entry of a package's file list: type and permissions as ls prints them, owner, link target. */
    record Entry(String path, String mode, String owner, String link) {
        boolean isDirectory() {
            return mode.startsWith("d");
        }
    }

    static Path deb() throws IOException {
        return only(TARGET, "glob:*.deb", "the .deb jdeb builds in package");
    }

    static Path rpm() throws IOException {
        Path dir = TARGET.resolve("rpm/rsmap/RPMS/x86_64");
        if (!Files.isDirectory(dir)) {
            missing("no " + dir + ": the RPM is built only where rpmbuild is (Debian's rpm package; .ci/run installs it)");
        }
        return only(dir, "glob:*.rpm", "the .rpm rpm-maven-plugin builds in package");
    }

    /** A tool or file a test cannot do without: skips, but fails under CI=true (STYLE.md, "Tests"). */
    static void missing(String why) {
        if ("true".equals(System.getenv("CI"))) {
            fail(why);
        }
        Assumptions.abort(why);
    }

    private static Path only(Path dir, String glob, String what) throws IOException {
        var matcher = dir.getFileSystem().getPathMatcher(glob);
        List<Path> found;
        try (Stream<Path> s = Files.list(dir)) {
            found = s.filter(p -> matcher.matches(p.getFileName())).toList();
        }
        if (found.size() != 1) {
            fail("expected one " + what + " in " + dir + ", found " + found);
        }
        return found.get(0);
    }

    private static final Map<String, Map<String, Entry>> LISTED = new java.util.concurrent.ConcurrentHashMap<>();

    /** dpkg-deb -c, by path without the leading "."; read once per package. */
    static Map<String, Entry> debEntries(Path deb) throws Exception {
        Map<String, Entry> known = LISTED.get(deb.toString());
        if (known != null) {
            return known;
        }
        Map<String, Entry> out = new TreeMap<>();
        for (String line : Run.ok(List.of("dpkg-deb", "-c", deb.toString())).split("\n")) {
            // drwxr-xr-x root/root 0 2026-12-02 13:51 ./usr/share/ [-> target]
            String[] f = line.split("\\s+", 6);
            String name = f[5];
            String link = "";
            int arrow = name.indexOf(" -> ");
            if (arrow >= 0) {
                link = name.substring(arrow + 4);
                name = name.substring(0, arrow);
            }
            String path = name.substring(1).replaceAll("/$", "");
            if (!path.isEmpty()) {
                out.put(path, new Entry(path, f[0], f[1].replace('/', ':'), link));
            }
        }
        LISTED.put(deb.toString(), Map.copyOf(out));
        return LISTED.get(deb.toString());
    }

    /** The files rpm -qp lists, with their modes and owners; read once per package. */
    static Map<String, Entry> rpmEntries(Path rpm) throws Exception {
        Map<String, Entry> known = LISTED.get(rpm.toString());
        if (known != null) {
            return known;
        }
        Map<String, Entry> out = new TreeMap<>();
        String qf = "[%{FILEMODES:perms}\\t%{FILEUSERNAME}:%{FILEGROUPNAME}\\t%{FILENAMES}\\t%{FILELINKTOS}\\n]";
        for (String line : Run.ok(List.of("rpm", "-qp", "--qf", qf, rpm.toString())).split("\n")) {
            String[] f = line.split("\t", -1);
            out.put(f[2], new Entry(f[2], f[0], f[1], f[3]));
        }
        LISTED.put(rpm.toString(), Map.copyOf(out));
        return LISTED.get(rpm.toString());
    }

    /** rpm -qpl: the plain list the issue names. */
    static List<String> rpmList(Path rpm) throws Exception {
        return lines(Run.ok(List.of("rpm", "-qpl", rpm.toString())));
    }

    /** rpm -qpR. */
    static List<String> rpmRequires(Path rpm) throws Exception {
        return lines(Run.ok(List.of("rpm", "-qpR", rpm.toString())));
    }

    static String debField(Path deb, String field) throws Exception {
        return Run.ok(List.of("dpkg-deb", "-f", deb.toString(), field)).strip();
    }

    static List<String> lines(String s) {
        List<String> out = new ArrayList<>();
        for (String l : s.split("\n")) {
            if (!l.isBlank()) {
                out.add(l.strip());
            }
        }
        return out;
    }
}
