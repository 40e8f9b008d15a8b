// A standby's rehearsal of its takeover: the authority's rooms built once on a scratch state directory and
// a few commands run through them, so that the takeover finds its classes loaded and its code warm.
package rsmap.daemon;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Stream;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.ConfigText;
import rsmap.daemon.config.Discovery;
import rsmap.daemon.config.HostAuth;
import rsmap.log.Log;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

/**
 * docs/cluster.md, "Takeover timeline": most of a cold takeover is the JVM loading and first running the
 * daemon's code. The rehearsal copies the configuration with a scratch {@code state_dir} and {@code socket}
 * (never bound: nothing is served), grants and ends one global instance, and removes the scratch
 * directory. It touches nothing of the real state; when it fails, the takeover is only slower.
 */
final class Rehearsal {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Rehearsal() {
    }

    /** Runs the rehearsal on a thread of its own; {@code configFile} null: nothing to copy, no rehearsal. */
    static void start(Config config, ComplexTable table, Path configFile, HostAuth auth) {
        if (configFile == null) {
            return;
        }
        Thread t = new Thread(() -> run(table, configFile, auth), "rsmapd-rehearsal");
        t.setDaemon(true);
        t.setPriority(Thread.MIN_PRIORITY);
        t.start();
    }

    private static void run(ComplexTable table, Path configFile, HostAuth auth) {
        Path dir = null;
        try {
            dir = Files.createTempDirectory("rsmapd-rehearsal");
            Log.write(Log.Level.INFO, "standby: rehearsing a takeover on the scratch state directory " + dir
                    + " (its job rehearsal:1 is no real job)");
            String text = ConfigText.read(configFile).replaceAll("(?im)^[ \\t]*(state_dir|socket)[ \\t]*=.*$", "")
                    + "\nstate_dir = " + dir.resolve("state") + "\nsocket = " + dir.resolve("sock") + "\n";
            Config scratch = Config.parse(text, configFile, "localhost");
            try (Daemon d = new Daemon(scratch, table, null, Discovery.system(), auth, null)) {
                Session root = new Session((code, command, session) -> d.handle(code, command, session),
                        new Session.Peer("root", "root", 0, 0, 0));
                root.onCommand(Frame.of(1, Code.INIT.value(), Session.VERSION));
                List<Frame> q = root.onCommand(Frame.of(2, Code.QUERY.value(), "{\"cluster\":true}"));
                root.onCommand(Frame.of(3, Code.MODEL_DEF.value()));
                Iterator<String> maps = JSON.readTree(q.get(0).text(0)).path("maps").fieldNames();
                if (maps.hasNext()) {
                    root.onCommand(Frame.of(4, Code.JOB_START.value(), "{\"host\":\"rehearsal\",\"job\":\"1\",\"user\":"
                            + "\"root\",\"request\":\"" + maps.next() + "=1\"}"));
                    root.onCommand(Frame.of(5, Code.JOB_END.value(), "{\"host\":\"rehearsal\",\"job\":\"1\"}"));
                }
            }
        } catch (IOException | ParseException | RuntimeException e) {
            // the takeover builds its own rooms anyway
        } finally {
            if (dir != null) {
                try (Stream<Path> all = Files.walk(dir)) {
                    for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(p);
                    }
                } catch (IOException e) {
                    // a scratch directory left in the temporary directory
                }
            }
        }
    }
}
