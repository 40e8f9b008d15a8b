// rsmapd for crash tests: the daemon's own Main, with CdiSpecs stopping at a fault point named by the system
// property rsmap.test.cdi.fault (write:MARKER or remove:MARKER) - it creates MARKER and waits there to be
// killed between the journal and the spec (docs/containers.md, "In step with the grant").
package rsmap.daemon;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

public final class FaultingMain {
    /** How long the daemon waits at its fault point at most. */
    private static final long WAIT_MS = 120_000;

    private FaultingMain() {
    }

    public static void main(String[] args) throws Exception {
        String fault = System.getProperty("rsmap.test.cdi.fault", "");
        CdiSpecs.faultPoint = op -> {
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
        Main.main(args);
    }
}
