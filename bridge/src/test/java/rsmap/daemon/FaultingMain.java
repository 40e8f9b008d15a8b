// rsmapd for crash tests: the daemon of rsmapd.conf served as Main serves it, its CdiSpecs stopping at the fault
// point named by the system property rsmap.test.cdi.fault (write:MARKER or remove:MARKER) - it creates MARKER
// and waits there to be killed between the journal and the spec (docs/containers.md, "In step with the grant").
package rsmap.daemon;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.ConfigText;
import rsmap.daemon.config.Discovery;
import rsmap.daemon.config.HostAuth;
import rsmap.daemon.devices.CdiSpecs;

public final class FaultingMain {
    /** How long the daemon waits at its fault point at most. */
    private static final long WAIT_MS = 120_000;

    private FaultingMain() {
    }

    /** {@code --config FILE}, as RsmapdProcess starts Main; the test kills it (SIGKILL), nothing stops it else. */
    public static void main(String[] args) throws Exception {
        String fault = System.getProperty("rsmap.test.cdi.fault", "");
        CdiSpecs.FaultPoint stop = op -> {
            if (!fault.startsWith(op + ":")) {
                return;
            }
            try {
                Files.writeString(Path.of(fault.substring(op.length() + 1)), op);
                Thread.sleep(WAIT_MS);
            } catch (IOException | InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        Path file = Path.of(args[1]);
        Config config = Config.parse(ConfigText.read(file), file, "localhost"); // the test's names its host
        ComplexTable table = ComplexTable.parse(ConfigText.read(config.complexes()));
        new Daemon(config, table, file, Discovery.system(), HostAuth.MUNGE, null, stop).serve();
        new CountDownLatch(1).await(); // serves on its own threads until killed
    }
}
