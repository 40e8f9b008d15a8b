// Test support: rsmapd as a process of its own, as systemd runs it, so that a test can SIGKILL it.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

final class RsmapdProcess {
    private RsmapdProcess() {
    }

    /** Starts rsmapd on {@code conf} and waits for its socket; its output is appended to {@code log}. */
    static Process start(Path conf, Path socket, Path log) throws Exception {
        return start(conf, socket, log, new String[0]);
    }

    /** The same with more options for its JVM. */
    static Process start(Path conf, Path socket, Path log, String... jvm) throws Exception {
        return start(Main.class, conf, socket, log, jvm);
    }

    /** The same with another main class ({@link FaultingMain}: a crash test's fault point). */
    static Process start(Class<?> main, Path conf, Path socket, Path log, String... jvm) throws Exception {
        Files.deleteIfExists(socket);
        java.util.List<String> cmd = new java.util.ArrayList<>(java.util.List.of(Path.of(System.getProperty("java.home"),
                "bin", "java").toString(), "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-XX:+UseSerialGC"));
        cmd.addAll(java.util.List.of(jvm));
        cmd.addAll(java.util.List.of("-cp", System.getProperty("java.class.path"), main.getName(), "--config",
                conf.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(java.lang.ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        for (int i = 0; i < 600 && !Files.exists(socket); i++) {
            assertThat(p.isAlive()).as(Files.exists(log) ? Files.readString(log) : "no log").isTrue();
            Thread.sleep(50);
        }
        assertThat(socket).exists();
        return p;
    }
}
