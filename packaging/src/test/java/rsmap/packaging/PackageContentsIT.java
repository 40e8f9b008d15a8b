// What the .deb and the .rpm hold, read back with dpkg-deb and rpm: the layout of packaging/README.md, and
// the same files, versions and dependencies in both ("rpm -qpl / rpm -qpR of the .rpm list the
// same files and dependencies").
package rsmap.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PackageContentsIT {
    /** The only files that differ, on purpose: what Debian policy asks of every package (12.5, 12.7). */
    static final List<String> DEB_ONLY = List.of("/usr/share/doc/rsmap/copyright", "/usr/share/doc/rsmap/changelog.Debian.gz");
    /** The licence where RPM packages keep it. */
    static final List<String> RPM_ONLY = List.of("/usr/share/doc/rsmap/LICENSE");

    /**
     * Every file both packages install, and the jars of bridge/target/lib under /usr/share/rsmap/lib, and
     * the repository's examples/ under /usr/share/doc/rsmap/examples.
     */
    static final List<String> FILES = List.of(
            "/etc/rsmap/rsmapd.conf",
            "/usr/bin/rsmap",
            "/usr/bin/rsmap-shell",
            "/usr/lib/rsmap/rsmap_place.so",
            "/usr/lib/systemd/system/rsmapd.service",
            "/usr/libexec/rsmap/execd-stub",
            "/usr/libexec/rsmap/rsmap-hook",
            "/usr/libexec/rsmap/rsmap-place",
            "/usr/libexec/rsmap/rsmap-shell",
            "/usr/libexec/rsmap/rsmap-starter",
            "/usr/libexec/rsmap/rsmap_jsv.sh",
            "/usr/sbin/rsmapd",
            "/usr/share/man/man1/rsmap-shell.1.gz",
            "/usr/share/man/man1/rsmap.1.gz",
            "/usr/share/man/man5/rsmapd.conf.5.gz",
            "/usr/share/man/man8/rsmapd.8.gz",
            "/usr/share/rsmap/rsmap.jar",
            "/usr/share/rsmap/slurm/job_submit.lua");

    /** The folders that are the package's own: removed with it (dpkg: when empty; rpm: %dir). */
    static final List<String> DIRECTORIES = List.of("/etc/rsmap", "/usr/lib/rsmap", "/usr/libexec/rsmap", "/usr/share/doc/rsmap",
            "/usr/share/doc/rsmap/examples", "/usr/share/rsmap", "/usr/share/rsmap/lib", "/usr/share/rsmap/slurm");

    static Set<String> expectedFiles() throws Exception {
        Set<String> all = new TreeSet<>(FILES);
        try (Stream<Path> jars = Files.list(Path.of("..", "bridge", "target", "lib"))) {
            jars.map(p -> "/usr/share/rsmap/lib/" + p.getFileName()).filter(p -> p.endsWith(".jar")).forEach(all::add);
        }
        try (Stream<Path> examples = Files.list(Path.of("..", "examples"))) {
            examples.map(p -> "/usr/share/doc/rsmap/examples/" + p.getFileName()).forEach(all::add);
        }
        return all;
    }

    static Set<String> files(Map<String, Packages.Entry> entries) {
        Set<String> out = new TreeSet<>();
        entries.values().stream().filter(e -> !e.isDirectory()).forEach(e -> out.add(e.path()));
        return out;
    }

    @Test
    void deb_holdsTheLayout() throws Exception {
        Set<String> expected = expectedFiles();
        expected.addAll(DEB_ONLY);
        Map<String, Packages.Entry> deb = Packages.debEntries(Packages.deb());
        assertThat(files(deb)).containsExactlyElementsOf(expected);
        assertThat(deb.keySet()).containsAll(DIRECTORIES);
    }

    @Test
    void rpm_listsTheSameFilesAsTheDeb() throws Exception {
        Path rpm = Packages.rpm();
        Set<String> debFiles = files(Packages.debEntries(Packages.deb()));
        debFiles.removeAll(DEB_ONLY);
        debFiles.addAll(RPM_ONLY);
        Map<String, Packages.Entry> entries = Packages.rpmEntries(rpm);
        assertThat(files(entries)).containsExactlyElementsOf(debFiles);
        // rpm -qpl names the files and the folders the package owns - and no system folder such as /usr/bin
        List<String> owned = new ArrayList<>(Packages.rpmList(rpm));
        owned.removeAll(debFiles);
        assertThat(owned).containsExactlyInAnyOrderElementsOf(DIRECTORIES);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            # path                            | deb mode and owner             | rpm mode and owner
            /usr/bin/rsmap                    | -rwxr-xr-x root:root           | -rwxr-xr-x root:root
            /usr/sbin/rsmapd                  | -rwxr-xr-x root:root           | -rwxr-xr-x root:root
            /usr/libexec/rsmap/rsmap-hook     | -rwxr-xr-x root:root           | -rwxr-sr-x root:rsmap
            /usr/libexec/rsmap/rsmap-shell    | -rwxr-xr-x root:root           | -rwxr-sr-x root:rsmap
            /usr/libexec/rsmap/rsmap-place    | -rwxr-xr-x root:root           | -rwxr-xr-x root:root
            /usr/lib/rsmap/rsmap_place.so     | -rw-r--r-- root:root           | -rw-r--r-- root:root
            /usr/libexec/rsmap/rsmap_jsv.sh   | -rwxr-xr-x root:root           | -rwxr-xr-x root:root
            /usr/libexec/rsmap/execd-stub     | -rwxr-xr-x root:root           | -rwxr-xr-x root:root
            /usr/share/rsmap/rsmap.jar        | -rw-r--r-- root:root           | -rw-r--r-- root:root
            /usr/share/rsmap/slurm/job_submit.lua | -rw-r--r-- root:root       | -rw-r--r-- root:root
            /etc/rsmap/rsmapd.conf            | -rw-r--r-- root:root           | -rw-r--r-- root:root
            /usr/lib/systemd/system/rsmapd.service | -rw-r--r-- root:root      | -rw-r--r-- root:root
            /usr/share/man/man8/rsmapd.8.gz   | -rw-r--r-- root:root           | -rw-r--r-- root:root
            """)
    void modesAndOwners(String path, String deb, String rpm) throws Exception {
        Packages.Entry d = Packages.debEntries(Packages.deb()).get(path);
        assertThat(d.mode() + " " + d.owner()).isEqualTo(deb);
        Packages.Entry r = Packages.rpmEntries(Packages.rpm()).get(path);
        assertThat(r.mode() + " " + r.owner()).isEqualTo(rpm);
    }

    /** The hook's starter and rsmap-shell run as a job's owner and must reach the 0660 socket. */
    @ParameterizedTest
    @CsvSource({"hook, rsmap-hook", "shell, rsmap-shell"})
    void setGroupIdRsmap_inTheRpmAtOnce_andThroughAStatoverrideInTheDeb(String variable, String name) throws Exception {
        // A .deb cannot carry a group that does not exist before its postinst: dpkg-statoverride does it.
        String postinst = Files.readString(Path.of("src/main/deb/control/postinst"));
        assertThat(postinst).contains("dpkg-statoverride --update --add root rsmap 2755 \"$" + variable + "\"")
                .contains(variable + "=/usr/libexec/rsmap/" + name);
        // purge removes that override again
        assertThat(Files.readString(Path.of("src/main/deb/control/postrm"))).contains("/usr/libexec/rsmap/" + name);
        assertThat(Packages.rpmEntries(Packages.rpm()).get("/usr/libexec/rsmap/" + name).mode()).isEqualTo("-rwxr-sr-x");
    }

    @ParameterizedTest
    @CsvSource({"bin, /usr/libexec/rsmap/rsmap-hook", "bin, /usr/libexec/rsmap/rsmap-shell",
        "bin, /usr/libexec/rsmap/rsmap-place", "bin, /usr/libexec/rsmap/execd-stub", "module, /usr/lib/rsmap/rsmap_place.so"})
    void binaries_areStripped_andTheSameInBoth(String built, String path) throws Exception {
        Path file = Packages.TARGET.resolve(built).resolve(Path.of(path).getFileName());
        String sections = Run.ok(List.of("readelf", "-S", "--wide", file.toString()));
        assertThat(sections).as("stripped: no symbol table (Debian policy 10.1)").contains(".text").doesNotContain(".symtab");
        if (path.endsWith(".so")) { // what package.loadlib looks up stays, alone
            assertThat(Run.ok(List.of("sh", "-c", "nm -D --defined-only \"$0\" | grep ' T '", file.toString())))
                    .contains(" T luaopen_rsmap_place").hasLineCount(1);
        }
        String deb = Run.ok(List.of("sh", "-c", "dpkg-deb --fsys-tarfile \"$0\" | tar -xOf - .\"$1\" | sha256sum",
                Packages.deb().toString(), path)).split(" ")[0];
        // rpm keeps each file's SHA-256 (rpmlib(FileDigests))
        String rpm = Run.ok(List.of("rpm", "-qp", "--qf", "[%{FILENAMES} %{FILEDIGESTS}\\n]", Packages.rpm().toString()));
        assertThat(rpm).contains(path + " " + deb + "\n");
    }

    /** The starter is the hook by another name; jobs find rsmap-shell on PATH. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            # link                            | target
            /usr/libexec/rsmap/rsmap-starter  | rsmap-hook
            /usr/bin/rsmap-shell              | ../libexec/rsmap/rsmap-shell
            """)
    void links_theSameInBoth(String link, String target) throws Exception {
        assertThat(Packages.debEntries(Packages.deb()).get(link).link()).isEqualTo(target);
        assertThat(Packages.rpmEntries(Packages.rpm()).get(link).link()).isEqualTo(target);
    }

    @Test
    void conffiles_areTheDefaultConfiguration_inBoth() throws Exception {
        String debConffiles = Run.ok(List.of("dpkg-deb", "-I", Packages.deb().toString(), "conffiles"));
        assertThat(Packages.lines(debConffiles)).containsExactly("/etc/rsmap/rsmapd.conf");
        String rpmConfig = Run.ok(List.of("rpm", "-qpc", Packages.rpm().toString()));
        assertThat(Packages.lines(rpmConfig)).containsExactly("/etc/rsmap/rsmapd.conf");
        // %config(noreplace): an admin's changed file wins over a new default on upgrade, as with dpkg
        String flags = Run.ok(List.of("rpm", "-qp", "--qf", "[%{FILENAMES} %{FILEFLAGS:fflags}\\n]", Packages.rpm().toString()));
        assertThat(flags).contains("/etc/rsmap/rsmapd.conf cn");
    }

    @Test
    void version_isTheProjectsInBoth() throws Exception {
        String project = System.getProperty("rsmap.projectVersion", "");
        assertThat(project).as("failsafe passes the project version").isNotEmpty();
        String expected = project.replace('-', '~') + "-1"; // 0.1.0-SNAPSHOT sorts before 0.1.0 as 0.1.0~SNAPSHOT
        assertThat(Packages.debField(Packages.deb(), "Version")).isEqualTo(expected);
        assertThat(Run.ok(List.of("rpm", "-qp", "--qf", "%{VERSION}-%{RELEASE}", Packages.rpm().toString()))).isEqualTo(expected);
        assertThat(Packages.debField(Packages.deb(), "Architecture")).isEqualTo("amd64");
        assertThat(Run.ok(List.of("rpm", "-qp", "--qf", "%{ARCH}", Packages.rpm().toString()))).isEqualTo("x86_64");
    }

    /**
     * Each Depends of the .deb and what the .rpm requires for it; the rest of rpm -qpR is rpm's own
     * bookkeeping (rpmlib(...), config(rsmap), rtld(GNU_HASH)) or the shell, which Debian never declares.
     */
    @ParameterizedTest
    @CsvSource(delimiter = ';', textBlock = """
            # deb Depends                                                   ; rpm Requires
            default-jre-headless (>= 2:1.17) | java17-runtime-headless      ; java-headless >= 1:17
            adduser                                                         ; shadow-utils
            libc6 (>= 2.34)                                                 ; libc.so.6(GLIBC_2.34)(64bit)
            """)
    void dependencies_match(String deb, String rpm) throws Exception {
        List<String> depends = List.of(Packages.debField(Packages.deb(), "Depends").split(",\\s*"));
        assertThat(depends).contains(deb);
        assertThat(Packages.rpmRequires(Packages.rpm())).contains(rpm);
    }

    @Test
    void dependencies_noneOtherOnEitherSide() throws Exception {
        List<String> depends = List.of(Packages.debField(Packages.deb(), "Depends").split(",\\s*"));
        assertThat(depends).hasSize(3);
        List<String> other = new ArrayList<>();
        for (String r : Packages.rpmRequires(Packages.rpm())) {
            if (!r.startsWith("rpmlib(") && !r.startsWith("config(rsmap)") && !r.equals("rtld(GNU_HASH)")
                    && !r.equals("/bin/sh") && !r.startsWith("libc.so.6(") && !r.equals("java-headless >= 1:17")
                    && !r.equals("shadow-utils")) {
                other.add(r);
            }
        }
        assertThat(other).as("rpm requirements with no counterpart in the deb").isEmpty();
    }

    @Test
    void libc_theDebDeclaresTheNewestSymbolVersionTheBinariesUse() throws Exception {
        // rpmbuild reads the ELF symbol versions of rsmap-hook, rsmap-shell and execd-stub: the deb's libc6 (>= X) is X
        Pattern glibc = Pattern.compile("libc\\.so\\.6\\(GLIBC_([0-9.]+)\\)\\(64bit\\)");
        String newest = "0";
        for (String r : Packages.rpmRequires(Packages.rpm())) {
            Matcher m = glibc.matcher(r);
            if (m.matches() && compare(m.group(1), newest) > 0) {
                newest = m.group(1);
            }
        }
        assertThat(Packages.debField(Packages.deb(), "Depends")).contains("libc6 (>= " + newest + ")");
    }

    private static int compare(String a, String b) {
        String[] x = a.split("\\.");
        String[] y = b.split("\\.");
        for (int i = 0; i < Math.max(x.length, y.length); i++) {
            int d = Integer.compare(i < x.length ? Integer.parseInt(x[i]) : 0, i < y.length ? Integer.parseInt(y[i]) : 0);
            if (d != 0) {
                return d;
            }
        }
        return 0;
    }

    @Test
    void manPages_areGzipped_andRenderWithTheVersion() throws Exception {
        for (String page : List.of("man1/rsmap.1.gz", "man1/rsmap-shell.1.gz", "man5/rsmapd.conf.5.gz", "man8/rsmapd.8.gz")) {
            Path gz = Packages.TARGET.resolve("man").resolve(page);
            String text = Run.ok(List.of("gzip", "-dc", gz.toString()));
            String version = System.getProperty("rsmap.projectVersion").replace('-', '~');
            assertThat(text).as(page).startsWith(".\\\"").contains(".TH ").contains("\"rsmap " + version + "\"")
                    .doesNotContain("@VERSION@");
        }
    }
}
