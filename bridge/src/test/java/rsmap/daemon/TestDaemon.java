// Test support: a real rsmapd on a temporary socket and state directory, dry-run devices, the example
// complex table, and this user as admin.
package rsmap.daemon;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.Discovery;
import rsmap.daemon.config.HostAuth;
import rsmap.daemon.devices.CdiSpecs;

public final class TestDaemon {
    private TestDaemon() {
    }

    /** The configuration of a daemon in {@code dir} serving {@code complexValues} on host node01. */
    public static Config config(Path dir, String complexValues, String... more) throws Exception {
        Files.createDirectories(dir);
        Files.copy(Path.of("..", "examples", "complexes"), dir.resolve("complexes"));
        List<String> lines = new ArrayList<>(List.of("complexes = complexes", "host = node01",
                "complex_values = " + complexValues, "socket = rsmapd.sock", "state_dir = state",
                "device_backend = dry-run", "admin_user = " + System.getProperty("user.name"),
                "discover = off", // this machine's attributes would vary every answer; tests discover fake files
                "realloc_max_grow = 64", // jobs of the tests grow freely; the limit's own tests set it
                "cdi_dir = cdi")); // the jobs' CDI specs in the test's folder, never the host's /var/run/cdi
        Path conf = Files.writeString(dir.resolve("rsmapd.conf"), String.join("\n", settings(lines, more)) + "\n");
        return Config.parse(Files.readString(conf), conf, "node01");
    }

    /** {@code defaults} with {@code more} ("key = value" each) after them, a setting of {@code more} replacing its default. */
    public static List<String> settings(List<String> defaults, String... more) {
        List<String> lines = new ArrayList<>(defaults);
        for (String m : more) {
            String key = m.substring(0, m.indexOf('=')).strip();
            lines.removeIf(l -> l.startsWith(key + " ="));
            lines.add(m);
        }
        return lines;
    }

    /** A daemon serving {@code config} with the attributes {@code discovery} finds. */
    public static Daemon start(Config config, Discovery discovery) throws Exception {
        return new Daemon(config, ComplexTable.parse(Files.readString(config.complexes())),
                config.complexes().resolveSibling("rsmapd.conf"), discovery).serve();
    }

    /** A daemon serving {@code config} whose hosts and authority log in by {@code auth}. */
    public static Daemon start(Config config, HostAuth auth) throws Exception {
        return new Daemon(config, ComplexTable.parse(Files.readString(config.complexes())),
                config.complexes().resolveSibling("rsmapd.conf"), Discovery.system(), auth).serve();
    }

    /** A daemon serving {@code config} whose CDI specs stop at {@code cdiFaults}. */
    public static Daemon start(Config config, CdiSpecs.FaultPoint cdiFaults) throws Exception {
        return new Daemon(config, ComplexTable.parse(Files.readString(config.complexes())),
                config.complexes().resolveSibling("rsmapd.conf"), Discovery.system(), HostAuth.MUNGE, null,
                cdiFaults).serve();
    }

    /** A daemon serving {@code config}, its journal replayed. */
    public static Daemon start(Config config) throws Exception {
        return new Daemon(config, ComplexTable.parse(Files.readString(config.complexes())),
                config.complexes().resolveSibling("rsmapd.conf")).serve();
    }
}
