// Benchmark support: the real daemon as a separate process, started through bin/rsmapd under a
// NOTIFY_SOCKET the harness listens on, and what /proc says about it.
package rsmap.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import rsmap.daemon.NotifyListener;

/**
 * One rsmapd run in a folder of its own: {@code rsmapd.conf}, the example complex table, the socket and
 * the journal under {@code state/}. {@code RSMAPD_JAVA_OPTS} in the harness's environment reaches the
 * launcher, so other JVM flags can be measured without editing it.
 */
final class Rsmapd implements AutoCloseable {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    static final Path BIN = ROOT.resolve("bin/rsmapd");
    /** A guard against a daemon that never says READY, not a measurement. */
    static final Duration GUARD = Duration.ofSeconds(120);

    private final Path dir;
    private final Process process;
    private final long readyNanos;

    private Rsmapd(Path dir, Process process, long readyNanos) {
        this.dir = dir;
        this.process = process;
        this.readyNanos = readyNanos;
    }

    /** Writes {@code dir/rsmapd.conf} for host node01 serving {@code complexValues} (may hold {@code \} lines). */
    static Path configure(Path dir, String complexValues, String... more) throws IOException {
        Files.createDirectories(dir);
        Files.copy(ROOT.resolve("examples/complexes"), dir.resolve("complexes"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        List<String> lines = new ArrayList<>(List.of("complexes = complexes", "host = node01",
                "complex_values = " + complexValues.strip(), "socket = rsmapd.sock", "state_dir = state",
                "device_backend = dry-run", "admin_user = " + System.getProperty("user.name")));
        lines.addAll(Arrays.asList(more));
        return Files.writeString(dir.resolve("rsmapd.conf"), String.join("\n", lines) + "\n");
    }

    /** Writes {@code dir/rsmapd.conf} for an authority of {@code global} on 127.0.0.1:{@code port}. */
    static Path configureAuthority(Path dir, String global, int port, String... more) throws IOException {
        Files.createDirectories(dir);
        Files.copy(ROOT.resolve("examples/complexes"), dir.resolve("complexes"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        List<String> lines = new ArrayList<>(List.of("role = authority", "complexes = complexes",
                "global_complex_values = " + global, "listen = 127.0.0.1:" + port, "socket = rsmapd.sock",
                "state_dir = state", "admin_user = " + System.getProperty("user.name")));
        lines.addAll(Arrays.asList(more));
        return Files.writeString(dir.resolve("rsmapd.conf"), String.join("\n", lines) + "\n");
    }

    /** Execs bin/rsmapd on {@code dir/rsmapd.conf} and returns once READY=1 arrived. */
    static Rsmapd start(Path dir) throws IOException {
        return start(dir, java.util.Map.of());
    }

    /** The same, with {@code env} added to the daemon's environment. */
    static Rsmapd start(Path dir, java.util.Map<String, String> env) throws IOException {
        try (NotifyListener notify = NotifyListener.bind(dir.resolve("notify").toString())) {
            java.util.List<String> cmd = new java.util.ArrayList<>(TcpConnections.pinned("RSMAP_BENCH_SERVER_CPUS"));
            cmd.addAll(java.util.List.of(BIN.toString(), "--config", dir.resolve("rsmapd.conf").toString()));
            ProcessBuilder pb = new ProcessBuilder(cmd)
                    .redirectOutput(dir.resolve("rsmapd.out").toFile()).redirectError(dir.resolve("rsmapd.err").toFile());
            pb.environment().putAll(env);
            pb.environment().put("NOTIFY_SOCKET", notify.address());
            long t0 = System.nanoTime();
            Process p = pb.start();
            String said = notify.receive(GUARD).orElse("nothing");
            long ready = System.nanoTime() - t0;
            if (!said.equals("READY=1")) {
                p.destroyForcibly();
                throw new IllegalStateException("rsmapd said " + said + " instead of READY=1; stderr: "
                        + Files.readString(dir.resolve("rsmapd.err")));
            }
            return new Rsmapd(dir, p, ready);
        }
    }

    /** From the exec of bin/rsmapd to READY=1 on the notification socket. */
    long readyNanos() {
        return readyNanos;
    }

    Path socket() {
        return dir.resolve("rsmapd.sock");
    }

    boolean alive() {
        return process.isAlive();
    }

    /** A {@code /proc/<pid>/status} field in KiB, e.g. VmRSS (bin/rsmapd execs java: the pid is the JVM's). */
    long statusKiB(String field) throws IOException {
        return statusKiB(process.pid(), field);
    }

    static long statusKiB(long pid, String field) throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (l.startsWith(field + ":")) {
                return Long.parseLong(l.substring(field.length() + 1).replace("kB", "").strip());
            }
        }
        throw new IOException("no " + field + " in /proc/" + pid + "/status");
    }

    /** The JVM options the launcher gave: the arguments between {@code java} and {@code -cp}. */
    List<String> jvmOptions() throws IOException {
        String[] argv = new String(Files.readAllBytes(Path.of("/proc", Long.toString(process.pid()), "cmdline")),
                StandardCharsets.UTF_8).split("\0");
        List<String> opts = new ArrayList<>();
        for (int i = 1; i < argv.length && !argv[i].equals("-cp"); i++) {
            opts.add(argv[i]);
        }
        return opts;
    }

    /** SIGTERM, as a service manager stops it. */
    @Override
    public void close() throws IOException {
        process.destroy();
        try {
            if (!process.waitFor(GUARD.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    static double mib(long kib) {
        return kib / 1024.0;
    }
}
