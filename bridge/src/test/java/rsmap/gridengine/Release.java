// The Grid Engine releases the integration tests run: where each one's binaries are and how its cell is made.
package rsmap.gridengine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

enum Release {
    /** Son of Grid Engine 8.1.9, Debian's gridengine-master, -exec and -client. */
    SGE_8_1 {
        @Override
        List<String> missing() {
            List<String> m = new ArrayList<>();
            for (String f : new String[] {"/usr/lib/gridengine/sge_qmaster", "/usr/lib/gridengine/sge_execd",
                "/usr/bin/qsub", "/usr/lib/gridengine/spoolinit"}) {
                if (!Files.isExecutable(Path.of(f))) {
                    m.add(f + " (apt-get install gridengine-master gridengine-exec gridengine-client)");
                }
            }
            return m;
        }

        @Override
        Map<String, String> env() {
            return Map.of("SGE_ROOT", "/var/lib/gridengine", "PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        }

        @Override
        List<String> cellCommand(Path resources, String command, Path dir, String cell, int port) {
            return List.of(resources.resolve("sge-cell.sh").toString(), command, dir.toString(), cell,
                    Integer.toString(port));
        }
    },
    /** Open Cluster Scheduler 9.1.4 from the upstream source, built by .ci/build-ocs.sh into target/ocs/root. */
    OCS_9_1 {
        @Override
        List<String> missing() {
            return Files.isExecutable(root().resolve("bin/lx-amd64/sge_qmaster")) ? List.of()
                    : List.of(root() + " (built by .ci/build-ocs.sh from ../shared/ocs/)");
        }

        @Override
        Map<String, String> env() {
            return Map.of("SGE_ROOT", root().toString(),
                    "PATH", root().resolve("bin/lx-amd64") + ":/usr/sbin:/usr/bin:/sbin:/bin");
        }

        @Override
        List<String> cellCommand(Path resources, String command, Path dir, String cell, int port) {
            return List.of(resources.resolve("ocs-cell.sh").toString(), command, dir.toString(), cell,
                    Integer.toString(port));
        }
    };

    /** What this machine lacks to run the release, each with how to get it. */
    abstract List<String> missing();

    /** SGE_ROOT and PATH for the release's commands. */
    abstract Map<String, String> env();

    /** The cell script's command line: create, qmaster, execd, stop. */
    abstract List<String> cellCommand(Path resources, String command, Path dir, String cell, int port);

    /**
     * The release's own client {@code name} by its absolute path: a job's login shell (the starter runs one
     * where the queue's shell is in login_shells) resets PATH from /etc/profile, where SGE's are.
     */
    String client(String name) {
        for (String d : env().get("PATH").split(":")) {
            if (Files.isExecutable(Path.of(d, name))) {
                return Path.of(d, name).toString();
            }
        }
        throw new IllegalStateException(this + ": no " + name + " on " + env().get("PATH"));
    }

    static Path root() {
        return Path.of("..", "target", "ocs", "root").toAbsolutePath().normalize();
    }
}
