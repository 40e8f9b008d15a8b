// The authority's takeover benchmark (docs/cluster.md, "Active and standby"): from the SIGKILL of the active
// authority to the first global grant by its standby, p50/p99 over 20 takeovers, against takeover_timeout.
package rsmap.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Runs {@link rsmap.daemon.BenchTakeover} in a JVM of its own with the option the protocol's clients need
 * (the peer's pid on a Unix socket); args {@code [TAKEOVERS [TAKEOVER_TIMEOUT_S]]}.
 */
public final class Takeover {
    private Takeover() {
    }

    public static void main(String[] args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                rsmap.daemon.BenchTakeover.class.getName()));
        cmd.addAll(Arrays.asList(args));
        System.exit(new ProcessBuilder(cmd).inheritIO().start().waitFor());
    }
}
