// Test support: fake GPU device nodes made with mknod, and the rule that root-only tests run in CI.
package rsmap.device;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.map.DeviceList;
import rsmap.map.Instance;

public final class FakeDevices {
    public static final String TABLE = "gpu gpu RSMAP <= YES HOST 0 0\ndevices dev STRING == YES NO NONE 0\n"
            + "memory gmem MEMORY <= YES NO 0 0\n";

    private FakeDevices() {
    }

    /**
     * Skips a test that needs root, saying why; under CI=true the environment must be right, so it fails
     * instead (the brief: tests that need root or cgroups run in CI, never skip).
     */
    public static void requireRoot(String why) {
        boolean root = "root".equals(System.getProperty("user.name"));
        if (!root && "true".equals(System.getenv("CI"))) {
            throw new AssertionError("CI=true but not root: " + why);
        }
        assumeTrue(root, "needs root: " + why);
    }

    /** mknod {@code dir/name} c major minor (no driver behind 195:N here: opening it gives ENXIO). */
    public static Path node(Path dir, String name, int major, int minor) throws IOException, InterruptedException {
        Path p = dir.resolve(name);
        Process mk = new ProcessBuilder("mknod", p.toString(), "c", Integer.toString(major), Integer.toString(minor))
                .redirectErrorStream(true).start();
        if (!mk.waitFor(10, TimeUnit.SECONDS) || mk.exitValue() != 0) {
            throw new IOException("mknod " + p + " failed: " + new String(mk.getInputStream().readAllBytes()));
        }
        return p;
    }

    /** The instances of {@code gpu=...} on a host with these complex_values. */
    public static java.util.List<Instance> instances(String complexValues) throws ParseException {
        return ComplexValues.parse(complexValues, ComplexTable.parse(TABLE)).resourceMaps().get(0).instances();
    }

    /**
     * The closed policy of a job that holds nothing on the host (the starter enters every
     * job): only /dev/null, /dev/zero, /dev/full, /dev/random and /dev/urandom, read and write, their device
     * numbers read from this machine's nodes.
     */
    public static DevicePolicy basicsOnly() throws IOException {
        java.util.List<DeviceRule> rules = new java.util.ArrayList<>();
        for (String path : DevicePolicy.BASICS) {
            long rdev = (Long) Files.getAttribute(Path.of(path), "unix:rdev");
            rules.add(new DeviceRule(path, 'c', DevicePolicy.major(rdev), DevicePolicy.minor(rdev), DeviceList.Mode.RW));
        }
        return new DevicePolicy(true, rules, java.util.List.of());
    }

    public static Path tempDir() throws IOException {
        return Files.createTempDirectory("rsmap-dev");
    }
}
