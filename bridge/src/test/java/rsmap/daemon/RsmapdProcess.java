// Test support: rsmapd as a process of its own, as systemd runs it, so that a test can SIGKILL it.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import rsmap.wire.Polls;

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
        return start(main, conf, socket, log, Map.of(), jvm);
    }

    /** The same with {@code env} added to its environment (RSMAP_NVML_STUB: the stand-in's description). */
    static Process start(Path conf, Path socket, Path log, Map<String, String> env, String... jvm) throws Exception {
        return start(Main.class, conf, socket, log, env, jvm);
    }

    private static Process start(Class<?> main, Path conf, Path socket, Path log, Map<String, String> env,
                                 String... jvm) throws Exception {
        Files.deleteIfExists(socket);
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-XX:+UseSerialGC"));
        cmd.addAll(List.of(jvm));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName(), "--config", conf.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(Redirect.appendTo(log.toFile()));
        pb.environment().putAll(env);
        Process p = pb.start();
        Polls.await(Polls.BOUND, () -> {
            assertThat(p.isAlive()).as(Files.exists(log) ? Files.readString(log) : "no log").isTrue();
            return Files.exists(socket);
        });
        assertThat(socket).exists();
        return p;
    }
}
