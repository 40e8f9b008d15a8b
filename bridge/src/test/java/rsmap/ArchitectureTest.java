// Keeps the dependency rule of STYLE.md over every module: bridge -> plugin, bridge -> cgroup, cgroup -> plugin
// at most; the allocation core and the device policy never reach into the daemon, the wire, the journal or the CLI;
// and inside the daemon its packages by feature, each using only those below it, the roles' never each other
// (docs/architecture.md, "Roles"), with no circle between any two packages.
package rsmap;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ArchitectureTest {
    /** The project root: surefire runs each module's tests in the module's folder. */
    private static final Path ROOT = Path.of("..");

    /** Module (folder name) -> packages its main code may not import or name fully qualified. */
    static final Map<String, List<String>> FORBIDDEN = Map.of(
            "plugin", List.of("rsmap.device", "rsmap.daemon", "rsmap.wire", "rsmap.journal", "rsmap.cli"),
            "cgroup", List.of("rsmap.daemon", "rsmap.wire", "rsmap.journal", "rsmap.cli"));

    /** One use of a forbidden package: where, and the name used. */
    record Violation(String file, int line, String name) {
        @Override
        public String toString() {
            return file + ":" + line + " names " + name;
        }
    }

    /** Every folder under the root with Java main sources: the modules, found rather than listed. */
    static List<Path> modules() throws IOException {
        try (Stream<Path> s = Files.list(ROOT)) {
            return s.filter(m -> Files.isDirectory(m.resolve("src/main/java"))).sorted().collect(Collectors.toList());
        }
    }

    /**
     * The uses of {@code forbidden} packages in one source file: imports (static too), fully qualified
     * names in code, and the file's own package. Comments and string literals do not count.
     */
    static List<Violation> violations(String file, String source, List<String> forbidden) {
        String code = codeOnly(source);
        List<Violation> out = new ArrayList<>();
        for (String pkg : forbidden) {
            // Not part of a longer name on the left (xrsmap.cli, a.rsmap.cli), a whole segment on the right.
            Matcher m = Pattern.compile("(?<![\\w$.])" + Pattern.quote(pkg) + "(?![\\w$])").matcher(code);
            while (m.find()) {
                int line = 1 + (int) code.substring(0, m.start()).chars().filter(c -> c == '\n').count();
                int end = m.end();
                while (end < code.length() && (Character.isJavaIdentifierPart(code.charAt(end)) || code.charAt(end) == '.')) {
                    end++;
                }
                out.add(new Violation(file, line, code.substring(m.start(), end).replaceAll("\\.$", "")));
            }
        }
        return out;
    }

    /** {@code source} with comments, string, text block and char literals blanked; line breaks kept. */
    static String codeOnly(String source) {
        StringBuilder b = new StringBuilder(source.length());
        int i = 0;
        while (i < source.length()) {
            char c = source.charAt(i);
            String close = source.startsWith("//", i) ? "\n" : source.startsWith("/*", i) ? "*/"
                    : source.startsWith("\"\"\"", i) ? "\"\"\"" : c == '"' ? "\"" : c == '\'' ? "'" : null;
            if (close == null) {
                b.append(c);
                i++;
                continue;
            }
            int from = i + (close.equals("*/") ? 2 : close.equals("\n") ? 2 : close.length());
            int end = from;
            while (end < source.length() && !source.startsWith(close, end)) {
                end += source.charAt(end) == '\\' && !close.equals("\n") && !close.equals("*/") ? 2 : 1;
            }
            end = Math.min(source.length(), end + (close.equals("\n") ? 0 : close.length()));
            for (int k = i; k < end; k++) {
                b.append(source.charAt(k) == '\n' ? '\n' : ' ');
            }
            i = end;
        }
        return b.toString();
    }

    @Test
    void everyModule_keepsItsDependencyRule() throws IOException {
        List<Path> modules = modules();
        assertThat(modules.stream().map(m -> m.getFileName().toString()))
                .as("the scan finds the modules it guards").contains("plugin", "cgroup", "bridge");
        List<Violation> all = new ArrayList<>();
        int files = 0;
        for (Path module : modules) {
            List<String> forbidden = FORBIDDEN.getOrDefault(module.getFileName().toString(), List.of());
            List<Path> sources;
            try (Stream<Path> s = Files.walk(module.resolve("src/main/java"))) {
                sources = s.filter(p -> p.toString().endsWith(".java")).sorted().collect(Collectors.toList());
            }
            for (Path f : sources) {
                files++;
                all.addAll(violations(ROOT.relativize(f).toString(), Files.readString(f), forbidden));
            }
        }
        assertThat(files).as("Java sources scanned").isGreaterThan(50);
        assertThat(all).as("uses of packages a module may not depend on (STYLE.md, issue 12)").isEmpty();
    }

    /** The checker itself, on sources held in memory: each row a file and the names it must report. */
    @Test
    void violations_table_reportsWhatBreaksTheRuleAndNothingElse() {
        List<String> plugin = FORBIDDEN.get("plugin");
        List<String> cgroup = FORBIDDEN.get("cgroup");
        Object[][] rows = {
            // plugin may not import the daemon, the wire, the journal, the CLI or the device policy
            {plugin, "package rsmap.alloc;\nimport rsmap.daemon.Daemon;\nclass A {}\n", List.of("2:rsmap.daemon.Daemon")},
            {plugin, "package rsmap.alloc;\nimport static rsmap.cli.Main.run;\n", List.of("2:rsmap.cli.Main.run")},
            {plugin, "package rsmap.alloc;\nimport rsmap.wire.*;\n", List.of("2:rsmap.wire")},
            {plugin, "package rsmap.alloc;\nclass A {\n  rsmap.journal.Journal j;\n}\n", List.of("3:rsmap.journal.Journal")},
            {plugin, "package rsmap.alloc;\nclass A { Object p = rsmap.device.DevicePolicy.NONE; }\n",
                List.of("2:rsmap.device.DevicePolicy.NONE")},
            {plugin, "package rsmap.device;\nclass A {}\n", List.of("1:rsmap.device")},
            // what is allowed, or only looks like a use
            {plugin, "package rsmap.alloc;\nimport rsmap.map.ResourceMap;\nimport java.util.List;\n", List.of()},
            {plugin, "package rsmap.alloc;\n// see rsmap.daemon.Daemon\n/* rsmap.wire.Frame */\n/** {@link rsmap.cli.Main} */\n",
                List.of()},
            {plugin, "class A { String s = \"rsmap.daemon.Daemon \\\" rsmap.cli\"; char q = '\"'; }\n", List.of()},
            {plugin, "class A { String t = \"\"\"\n  rsmap.journal.Journal\n  \"\"\"; }\n", List.of()},
            {plugin, "import org.myrsmap.daemon.X;\nimport rsmap.daemonish.Y;\nimport rsmap.cli_tools.Z;\n", List.of()},
            // cgroup may use the device policy (its own) and the plugin, not the daemon's parts
            {cgroup, "package rsmap.device.v1;\nimport rsmap.device.DeviceBackend;\nimport rsmap.alloc.Grant;\n", List.of()},
            {cgroup, "package rsmap.device.v1;\nimport rsmap.journal.Journal;\n", List.of("2:rsmap.journal.Journal")},
            {cgroup, "package rsmap.device;\nclass A { void f() { rsmap.daemon.Daemon.main(null); } }\n",
                List.of("2:rsmap.daemon.Daemon.main")},
        };
        for (Object[] row : rows) {
            @SuppressWarnings("unchecked")
            List<String> forbidden = (List<String>) row[0];
            List<String> found = violations("A.java", (String) row[1], forbidden).stream()
                    .map(v -> v.line() + ":" + v.name()).collect(Collectors.toList());
            assertThat(found).as(String.valueOf(row[1])).isEqualTo(row[2]);
        }
    }

    /**
     * The daemon's packages by feature (issue 45), lowest first: each may use only the packages before it;
     * {@code rsmap.daemon} itself (the composition root, its entry and the command tables) may use them all
     * and none may use it. {@code link} is the host's side of the cluster, {@code authority} the authority's:
     * the roles' rooms, which never name each other (docs/architecture.md, "Roles").
     */
    static final List<String> LAYERS = List.of("config", "state", "devices", "records", "job", "health", "link",
            "authority");
    static final String HOST_ONLY = "link";
    static final String AUTHORITY_ONLY = "authority";

    /** The daemon packages (last names) that {@code pkg}'s code may name. */
    static Set<String> allowed(String pkg) {
        Set<String> below = new TreeSet<>(LAYERS.subList(0, LAYERS.indexOf(pkg)));
        below.remove(pkg.equals(AUTHORITY_ONLY) ? HOST_ONLY : AUTHORITY_ONLY);
        return below;
    }

    /** Every main source under {@code rsmap/<base>}, by its package's name. */
    static Map<Path, String> sources(String base) throws IOException {
        Path root = ROOT.resolve("bridge/src/main/java");
        Map<Path, String> out = new TreeMap<>();
        try (Stream<Path> s = Files.walk(root.resolve(base))) {
            for (Path f : s.filter(p -> p.toString().endsWith(".java")).collect(Collectors.toList())) {
                out.put(f, root.relativize(f.getParent()).toString().replace('/', '.'));
            }
        }
        return out;
    }

    /** The last name of a daemon package ("" for rsmap.daemon itself). */
    static String feature(String pkg) {
        return pkg.equals("rsmap.daemon") ? "" : pkg.substring("rsmap.daemon.".length());
    }

    /** The packages of bridge that {@code source}'s code names (imports and qualified names of a class). */
    static Set<String> packagesNamed(String source) {
        Matcher m = Pattern.compile("(?<![\\w$.])(rsmap(?:\\.[a-z]\\w*)+)\\.[A-Z]").matcher(codeOnly(source));
        Set<String> out = new TreeSet<>();
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    @Test
    void daemonPackages_useOnlyThePackagesBelowThem_andTheRolesNeverEachOther() throws IOException {
        Map<String, Set<String>> wrong = new TreeMap<>();
        Map<Path, String> all = sources("rsmap/daemon");
        for (Map.Entry<Path, String> e : all.entrySet()) {
            String own = feature(e.getValue());
            if (own.isEmpty()) {
                continue; // the composition root may name every package
            }
            assertThat(LAYERS).as("%s is in a package of the layer list", e.getKey()).contains(own);
            for (String named : packagesNamed(Files.readString(e.getKey()))) {
                if (named.equals("rsmap.daemon") || named.startsWith("rsmap.daemon.")) {
                    String f = feature(named);
                    if (!f.equals(own) && !allowed(own).contains(f)) {
                        wrong.computeIfAbsent(ROOT.resolve("bridge/src/main/java").relativize(e.getKey()).toString(),
                                k -> new TreeSet<>()).add(named);
                    }
                }
            }
        }
        assertThat(all).as("the daemon's sources").hasSizeGreaterThan(90);
        assertThat(wrong).as("daemon rooms naming a package above their own, or the other role's").isEmpty();
    }

    /** The rules' own table: what each package may name. */
    @Test
    void allowed_table_isTheLayersBelow_lessTheOtherRole() {
        assertThat(allowed("config")).isEmpty();
        assertThat(allowed("job")).containsExactly("config", "devices", "records", "state");
        assertThat(allowed("link")).containsExactly("config", "devices", "health", "job", "records", "state");
        assertThat(allowed("authority")).containsExactly("config", "devices", "health", "job", "records", "state");
        assertThat(packagesNamed("import rsmap.daemon.state.Job;\nclass A { rsmap.wire.Frame f; String s = \"rsmap.cli.X\"; }"))
                .containsExactly("rsmap.daemon.state", "rsmap.wire");
    }

    /** No circle between any two of bridge's packages (the daemon's, the wire, the journal, the CLI, ...). */
    @Test
    void bridgePackages_haveNoCircle() throws IOException {
        Map<String, Set<String>> uses = new TreeMap<>();
        for (Map.Entry<Path, String> e : sources("rsmap").entrySet()) {
            Set<String> named = new TreeSet<>(packagesNamed(Files.readString(e.getKey())));
            named.remove(e.getValue());
            uses.computeIfAbsent(e.getValue(), k -> new TreeSet<>()).addAll(named);
        }
        List<String> circle = new ArrayList<>();
        for (String start : uses.keySet()) {
            List<String> found = circleFrom(start, start, uses, new ArrayList<>(List.of(start)), new TreeSet<>());
            if (!found.isEmpty()) {
                circle = found;
                break;
            }
        }
        assertThat(uses).as("packages scanned").containsKeys("rsmap.daemon", "rsmap.daemon.state", "rsmap.wire");
        assertThat(circle).as("a circle of packages").isEmpty();
    }

    private static List<String> circleFrom(String start, String at, Map<String, Set<String>> uses, List<String> path,
                                           Set<String> seen) {
        for (String next : uses.getOrDefault(at, Set.of())) {
            if (next.equals(start)) {
                List<String> c = new ArrayList<>(path);
                c.add(start);
                return c;
            }
            if (uses.containsKey(next) && seen.add(next)) {
                path.add(next);
                List<String> c = circleFrom(start, next, uses, path, seen);
                if (!c.isEmpty()) {
                    return c;
                }
                path.remove(path.size() - 1);
            }
        }
        return List.of();
    }

    /** Each package small enough to see whole (STYLE.md: about 30 files at most). */
    @Test
    void daemonPackages_holdAtMost30Files() throws IOException {
        Map<String, Long> files = sources("rsmap/daemon").values().stream()
                .collect(Collectors.groupingBy(p -> p, TreeMap::new, Collectors.counting()));
        assertThat(files.keySet()).as("the daemon's packages").hasSize(LAYERS.size() + 1);
        assertThat(files).allSatisfy((pkg, n) -> assertThat(n).as(pkg).isLessThanOrEqualTo(30L));
    }

    /** The command tables of one role, in the composition root's package: each names its own role's package only. */
    static final Map<String, String> ROLE_TABLES = Map.of("HostCommands", AUTHORITY_ONLY, "AuthorityCommands", HOST_ONLY);
    /** The composition root: it alone chooses a role's rooms, so it names both. */
    static final String COMPOSITION_ROOT = "Daemon";
    /** The process's entry: it reads the role once more, to wait as a standby before the daemon is built. */
    static final String ENTRY = "Main";

    @Test
    void roleTables_nameOnlyTheirOwnRolesPackage() throws IOException {
        Map<String, Set<String>> wrong = new TreeMap<>();
        for (Map.Entry<String, String> t : ROLE_TABLES.entrySet()) {
            Path f = ROOT.resolve("bridge/src/main/java/rsmap/daemon/" + t.getKey() + ".java");
            if (packagesNamed(Files.readString(f)).contains("rsmap.daemon." + t.getValue())) {
                wrong.put(t.getKey(), Set.of(t.getValue()));
            }
        }
        assertThat(wrong).as("a role's command table naming the other role's package").isEmpty();
    }

    /** The simple name of a source file's class. */
    static String room(Path f) {
        return f.getFileName().toString().replaceFirst("\\.java$", "");
    }

    /**
     * The role is read where the rooms are chosen and nowhere else: {@code isAuthority()}, and whether
     * {@code authority()} is set, are asked in the daemon's code only in Daemon, Main and Scope (Config defines
     * them, Preflight checks the settings each role needs).
     */
    @Test
    void daemonRoles_areReadOnlyWhereTheRoomsAreChosen() throws IOException {
        Set<String> readers = new TreeSet<>();
        Pattern role = Pattern.compile("\\.isAuthority\\(\\)|\\.authority\\(\\)\\s*[!=]=");
        for (Path f : sources("rsmap/daemon").keySet()) {
            if (role.matcher(codeOnly(Files.readString(f))).find()) {
                readers.add(room(f));
            }
        }
        readers.removeAll(Set.of("Config", "Preflight"));
        assertThat(readers).as("rooms that ask which role they are in").containsExactlyInAnyOrder(COMPOSITION_ROOT, ENTRY,
                "Scope");
    }

    /** What a grant makes on the host beyond the core, the devices package's face to the other rooms (issue 45). */
    static final Set<String> DEVICE_FACE = Set.of("HostDevices", "GpuHost", "MigSlot");

    /**
     * No room outside the devices package reads MIG, CDI, GPU-variable or environment-file state: of it they name
     * only the seam (HostDevices), the reader of the GPUs that RELOAD runs (GpuHost) and a slice's place (MigSlot,
     * a value the journal's records check); the composition root makes the parts. The state reads the devices'
     * views through its own interface (DeviceViews).
     */
    @Test
    void deviceParts_areReachedOnlyThroughTheSeam() throws IOException {
        Map<String, Set<String>> reached = new TreeMap<>();
        Pattern devices = Pattern.compile("(?<![\\w$.])rsmap\\.daemon\\.devices\\.([A-Z]\\w*)");
        for (Map.Entry<Path, String> e : sources("rsmap/daemon").entrySet()) {
            if (e.getValue().equals("rsmap.daemon.devices") || room(e.getKey()).equals(COMPOSITION_ROOT)) {
                continue;
            }
            Matcher m = devices.matcher(codeOnly(Files.readString(e.getKey())));
            while (m.find()) {
                if (!DEVICE_FACE.contains(m.group(1))) {
                    reached.computeIfAbsent(room(e.getKey()), k -> new TreeSet<>()).add(m.group(1));
                }
            }
        }
        assertThat(reached).as("rooms reaching a device part around the seam (HostDevices)").isEmpty();
    }

    /** The daemon's rooms that face the wire: they alone turn refusals into ERROR frames or read ERROR categories. */
    static final Set<String> WIRE_ADAPTERS = Set.of("Commands", "WireErrors", "Daemon", "Standby", "EventHub", "Failover");

    /**
     * The domain's error is {@code Refusal} with its kind: no room but the wire's adapters names the wire's
     * exception or its categories (issue 45: MigHost, SlaveSpool and Health imported rsmap.wire for it).
     */
    @Test
    void daemonRooms_refuseWithTheDomainsError_notTheWires() throws IOException {
        Pattern wire = Pattern.compile("(?<![\\w$])(CommandException|Category)(?![\\w$])");
        Set<String> naming = new TreeSet<>();
        for (Path f : sources("rsmap/daemon").keySet()) {
            if (!WIRE_ADAPTERS.contains(room(f)) && wire.matcher(codeOnly(Files.readString(f))).find()) {
                naming.add(room(f));
            }
        }
        assertThat(naming).as("rooms naming the wire's exception or categories").isEmpty();
    }

    /** The layers below the daemon (the wire, its log, the journal, MUNGE, CDI) never name the daemon or the CLI. */
    @Test
    void lowerPackages_neverNameTheDaemonOrTheCli() throws IOException {
        Map<String, Set<String>> wrong = new TreeMap<>();
        for (String base : List.of("rsmap/wire", "rsmap/log", "rsmap/journal", "rsmap/munge", "rsmap/cdi")) {
            for (Path f : sources(base).keySet()) {
                for (String named : packagesNamed(Files.readString(f))) {
                    if (named.startsWith("rsmap.daemon") || named.startsWith("rsmap.cli")) {
                        wrong.computeIfAbsent(room(f), k -> new TreeSet<>()).add(named);
                    }
                }
            }
        }
        assertThat(wrong).as("lower layers naming the daemon or the CLI").isEmpty();
    }

    /** The rooms of {@code rooms} that {@code source}'s code names. */
    static Set<String> named(String source, Set<String> rooms) {
        String code = codeOnly(source);
        Set<String> out = new TreeSet<>();
        for (String room : rooms) {
            if (Pattern.compile("(?<![\\w$.])" + room + "(?![\\w$])").matcher(code).find()) {
                out.add(room);
            }
        }
        return out;
    }

    @Test
    void named_table_findsCodeUsesOnly() {
        Set<String> rooms = Set.of("Authority", "AuthorityLink");
        assertThat(named("class A { Authority a; }", rooms)).containsExactly("Authority");
        assertThat(named("class A { AuthorityLink l; Authority a; }", rooms)).containsExactly("Authority", "AuthorityLink");
        assertThat(named("class A { /** {@link Authority} */ String s = \"AuthorityLink\"; }", rooms)).isEmpty();
        assertThat(named("class A { AuthorityCommands c; x.Authority y; }", rooms)).isEmpty();
    }
}
