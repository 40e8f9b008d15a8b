// Test support: an authority in this JVM to which two hosts registered - node01 (x86_64, 2.4GHz, gpu=2) and
// node02 (aarch64, 1.8GHz, gpu=1) - the one that rsmap place, rsmap-place, the JSV and the Lua module ask
// (docs/cluster.md, "Placing a job").
package rsmap.daemon;

import java.nio.file.Path;
import rsmap.daemon.authority.AuthorityTest;
import rsmap.daemon.config.Config;
import rsmap.wire.Client;
import rsmap.wire.Code;
import rsmap.wire.Ports;

public final class PlaceAuthority implements AutoCloseable {
    private final Daemon daemon;
    private final Path socket;

    private PlaceAuthority(Daemon daemon, Path socket) {
        this.daemon = daemon;
        this.socket = socket;
    }

    /**
     * The authority in {@code dir} (its configuration, state and socket; a free loopback port), serving the
     * global maps {@code global} (null: none), once both hosts registered.
     */
    public static PlaceAuthority start(Path dir, String global) throws Exception {
        Config config = AuthorityTest.authorityConfig(dir, Ports.free(), global);
        PlaceAuthority a = new PlaceAuthority(TestDaemon.start(config), config.socket());
        try (Client c = Client.connect(config.socket())) {
            c.call(Code.REGISTER, "{\"host\":\"node01\",\"state\":{\"maps\":{},\"jobs\":[],"
                    + "\"complex_values\":\"gpu=2(0 1)\",\"attributes\":{\"arch\":\"x86_64\",\"cpu_speed\":\"2.4GHz\"}}}");
            c.call(Code.REGISTER, "{\"host\":\"node02\",\"state\":{\"maps\":{},\"jobs\":[],"
                    + "\"complex_values\":\"gpu=1(0)\",\"attributes\":{\"arch\":\"aarch64\",\"cpu_speed\":\"1.8GHz\"}}}");
        } catch (Exception | Error e) {
            a.close();
            throw e;
        }
        return a;
    }

    /** Its Unix socket, where PLACE is asked. */
    public Path socket() {
        return socket;
    }

    @Override
    public void close() throws Exception {
        daemon.close();
    }
}
