// rsmapd --train-cds: a short run through start-up and the job path, on a private socket, so that the JVM
// can archive the classes rsmapd loads (application class-data sharing) for faster starts.
package rsmap.daemon;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Bundled;
import rsmap.daemon.config.Config;
import rsmap.log.Log;
import rsmap.wire.Client;
import rsmap.wire.Code;

/**
 * Run with {@code -XX:ArchiveClassesAtExit=FILE} (the build does, for bin/rsmapd; the packages do at
 * install): starts a daemon on the bundled example host in a temporary directory, makes one client do
 * INIT, MODEL_DEF, JOB_START, QUERY and JOB_END, stops it and removes everything. Touches nothing else.
 */
final class Training {
    private Training() {
    }

    static int run() throws IOException, ParseException, Client.Refusal {
        Path dir = Files.createTempDirectory("rsmapd-train");
        try {
            Path conf = Bundled.exampleDaemon(dir, "dry-run");
            Config config = Config.parse(Files.readString(conf), conf, "node01");
            String complexes = Files.readString(config.complexes());
            Log.redirect(line -> { }); // a build step: its grant is no news
            try (Daemon daemon = new Daemon(config, ComplexTable.parse(complexes), conf).serve();
                 Client c = Client.connect(config.socket())) {
                c.call(Code.MODEL_DEF);
                c.call(Code.JOB_START, "{\"job\":\"1\",\"task\":\"undefined\",\"user\":\"root\",\"slots\":1,"
                        + "\"request\":\"gpu=2[same=id]\"}");
                c.call(Code.QUERY);
                c.call(Code.JOB_END, "{\"job\":\"1\",\"task\":\"undefined\"}");
            }
            return 0;
        } finally {
            Log.redirect(null);
            Bundled.deleteTree(dir);
        }
    }
}
