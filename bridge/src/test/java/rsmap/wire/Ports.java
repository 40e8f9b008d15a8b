// Test support: a free TCP port on the loopback address, for the tests that start a listener of their own
// (an authority, slurmctld, a JSV's rsmapd).
package rsmap.wire;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

public final class Ports {
    private Ports() {
    }

    /** A port that was free a moment ago (the kernel's pick; another process may take it before the caller). */
    public static int free() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
