// Keeps the dependency rule of STYLE.md over every module: bridge -> plugin, bridge -> cgroup, cgroup -> plugin
// at most; the allocation core and the device policy never reach into the daemon, the wire, the journal or the CLI;
// and inside the daemon the seam between its roles (docs/architecture.md, "Roles").
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

    /** The daemon's rooms that only an execution host has (its global part, its handler table). */
    static final Set<String> HOST_ROOMS = Set.of("AuthorityLink", "AuthorityChannel", "AuthorityHandshake", "HostEvents", "HostCommands",
            "PendingStarts", "Failover");
    /** The daemon's rooms that only an authority has. */
    static final Set<String> AUTHORITY_ROOMS = Set.of("Authority", "AuthorityCommands", "ClusterView", "Placing",
            "PlaceLane", "Standby", "Lease", "LeaseFile", "LeaseRecord");
    /** The composition root: it alone chooses a role's rooms, so it names both. */
    static final String COMPOSITION_ROOT = "Daemon";
    /** The process's entry: it reads the role once more, to wait as a standby before the daemon is built. */
    static final String ENTRY = "Main";

    /** The rooms (classes of rsmap.daemon) that {@code source}'s code names, of those in {@code rooms}. */
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

    /**
     * Host-only rooms never reach authority-only rooms, nor the reverse; the rooms both roles share reach
     * neither (they ask the GlobalPart, never whether there is an authority). Only Daemon names both.
     */
    @Test
    void daemonRoles_hostRoomsAndAuthorityRooms_neverReachEachOther() throws IOException {
        Path dir = ROOT.resolve("bridge/src/main/java/rsmap/daemon");
        Map<String, Set<String>> reached = new TreeMap<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path f : s.filter(p -> p.toString().endsWith(".java")).sorted().collect(Collectors.toList())) {
                String room = f.getFileName().toString().replaceFirst("\\.java$", "");
                if (room.equals(COMPOSITION_ROOT) || room.equals(ENTRY)) {
                    continue;
                }
                String source = Files.readString(f);
                Set<String> forbidden = HOST_ROOMS.contains(room) ? AUTHORITY_ROOMS
                        : AUTHORITY_ROOMS.contains(room) ? HOST_ROOMS : union(HOST_ROOMS, AUTHORITY_ROOMS);
                Set<String> own = new TreeSet<>(named(source, forbidden));
                own.remove(room);
                if (AUTHORITY_ROOMS.contains(room)) {
                    own.removeAll(AUTHORITY_ROOMS); // an authority room may use the authority's other rooms
                }
                if (!own.isEmpty()) {
                    reached.put(room, own);
                }
            }
        }
        assertThat(HOST_ROOMS.stream().map(r -> dir.resolve(r + ".java"))).allMatch(Files::exists);
        assertThat(AUTHORITY_ROOMS.stream().map(r -> dir.resolve(r + ".java"))).allMatch(Files::exists);
        assertThat(reached).as("rooms of one role (or shared) naming rooms of another role").isEmpty();
    }

    /**
     * The role is read where the rooms are chosen and nowhere else: {@code isAuthority()}, and whether
     * {@code authority()} is set, are asked in the daemon's code only in Daemon and Scope (Config defines
     * them, Preflight checks the settings each role needs).
     */
    @Test
    void daemonRoles_areReadOnlyWhereTheRoomsAreChosen() throws IOException {
        Path dir = ROOT.resolve("bridge/src/main/java/rsmap/daemon");
        Set<String> readers = new TreeSet<>();
        Pattern role = Pattern.compile("\\.isAuthority\\(\\)|\\.authority\\(\\)\\s*[!=]=");
        try (Stream<Path> s = Files.list(dir)) {
            for (Path f : s.filter(p -> p.toString().endsWith(".java")).collect(Collectors.toList())) {
                if (role.matcher(codeOnly(Files.readString(f))).find()) {
                    readers.add(f.getFileName().toString().replaceFirst("\\.java$", ""));
                }
            }
        }
        readers.removeAll(Set.of("Config", "Preflight"));
        assertThat(readers).as("rooms that ask which role they are in").containsExactlyInAnyOrder(COMPOSITION_ROOT, ENTRY,
                "Scope");
    }

    /** What a grant makes on the host beyond the core: each rendering a part behind the seam, {@link #DEVICE_SEAM} (issue 45). */
    static final Set<String> DEVICE_PARTS = Set.of("MigHost", "MigNames", "MigExplain", "CdiSpecs", "EnvFiles",
            "JournaledSlices", "Leftovers", "ReleaseNarrowing");
    /** The one seam the job's life, reallocation, reconciliation and RELOAD go through, and its read-only views. */
    static final Set<String> DEVICE_SEAM = Set.of("HostDevices", "DeviceViews", "HostDeviceViews");

    /** Whether room {@code room} is one of the parts or of their own family (MIG's and CDI's rooms, the file's after-answer rule). */
    static boolean inDeviceParts(String room) {
        return DEVICE_PARTS.contains(room) || room.startsWith("Mig") || room.startsWith("Cdi")
                || room.equals("AfterAnswer") || room.equals("GpuHost");
    }

    /**
     * No room outside the seam reads MIG, CDI, GPU-variable or environment-file state: the parts are named
     * only by the seam, by each other and by the composition root that makes them.
     */
    @Test
    void deviceParts_areReachedOnlyThroughTheSeam() throws IOException {
        Path dir = ROOT.resolve("bridge/src/main/java/rsmap/daemon");
        Map<String, Set<String>> reached = new TreeMap<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path f : s.filter(p -> p.toString().endsWith(".java")).sorted().collect(Collectors.toList())) {
                String room = f.getFileName().toString().replaceFirst("\\.java$", "");
                if (room.equals(COMPOSITION_ROOT) || DEVICE_SEAM.contains(room) || inDeviceParts(room)) {
                    continue;
                }
                Set<String> parts = named(Files.readString(f), DEVICE_PARTS);
                if (!parts.isEmpty()) {
                    reached.put(room, parts);
                }
            }
        }
        assertThat(DEVICE_PARTS.stream().map(r -> dir.resolve(r + ".java"))).allMatch(Files::exists);
        assertThat(reached).as("rooms reaching a device part around the seam (HostDevices, DeviceViews)").isEmpty();
    }

    /** The daemon's rooms that face the wire: they alone turn refusals into ERROR frames or read ERROR categories. */
    static final Set<String> WIRE_ADAPTERS = Set.of("Commands", "WireErrors", "Daemon", "Standby", "EventHub", "Failover");

    /**
     * The domain's error is {@code Refusal} with its kind: no room but the wire's adapters names the wire's
     * exception or its categories (issue 45: MigHost, SlaveSpool and Health imported rsmap.wire for it).
     */
    @Test
    void daemonRooms_refuseWithTheDomainsError_notTheWires() throws IOException {
        Path dir = ROOT.resolve("bridge/src/main/java/rsmap/daemon");
        Pattern wire = Pattern.compile("(?<![\\w$])(CommandException|Category)(?![\\w$])");
        Set<String> naming = new TreeSet<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path f : s.filter(p -> p.toString().endsWith(".java")).collect(Collectors.toList())) {
                String room = f.getFileName().toString().replaceFirst("\\.java$", "");
                if (!WIRE_ADAPTERS.contains(room) && wire.matcher(codeOnly(Files.readString(f))).find()) {
                    naming.add(room);
                }
            }
        }
        assertThat(naming).as("rooms naming the wire's exception or categories").isEmpty();
    }

    @Test
    void named_table_findsCodeUsesOnly() {
        Set<String> rooms = Set.of("Authority", "AuthorityLink");
        assertThat(named("class A { Authority a; }", rooms)).containsExactly("Authority");
        assertThat(named("class A { AuthorityLink l; Authority a; }", rooms)).containsExactly("Authority", "AuthorityLink");
        assertThat(named("class A { /** {@link Authority} */ String s = \"AuthorityLink\"; }", rooms)).isEmpty();
        assertThat(named("class A { AuthorityCommands c; x.Authority y; }", rooms)).isEmpty();
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> u = new TreeSet<>(a);
        u.addAll(b);
        return u;
    }
}
