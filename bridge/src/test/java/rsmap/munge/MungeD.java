// A real munged for tests: its own fresh key, socket, pid, seed and log in a temp dir, a child of this JVM.
package rsmap.munge;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import rsmap.wire.Polls;

/**
 * munged as SlurmCluster runs it ({@code --foreground --force}, every path its own), with a key of 1024
 * random bytes (mode 0400, owned by this JVM's user, whom munged runs as; MUNGE wants at least 32). Two
 * MungeDs have different keys: a credential of one is a forgery to the other. Stopped by its pid
 * ({@link #close()}, or a shutdown hook), its directory removed.
 *
 * <p>The directory is mode 0755, so that a process of another uid ({@link #asUser}) reaches the socket.
 */
public final class MungeD implements AutoCloseable {
    /** What the tests run: the daemon, and the command-line client for cross-checks and other uids. */
    private static final String[] COMMANDS = {"munged", "munge", "unmunge"};

    private final Path dir;
    private final Process process;
    private final Thread onExit;
    private boolean closed;

    /** What a command said. */
    public record Run(int code, String out, String err) {
    }

    private MungeD(Path dir, Process process) {
        this.dir = dir;
        this.process = process;
        this.onExit = new Thread(this::stop, "munged-stop");
    }

    /**
     * Skips a test whose machine lacks munged, the munge programs or libmunge (and, with {@code asRoot},
     * root and setpriv, for credentials of another uid), saying what; under CI=true fails instead (.ci/run
     * installs the munge package, which brings libmunge2).
     */
    public static void requirePrerequisites(boolean asRoot) {
        List<String> missing = new ArrayList<>();
        List<String> commands = new ArrayList<>(List.of(COMMANDS));
        if (asRoot) {
            commands.add("setpriv");
            if (!"root".equals(System.getProperty("user.name"))) {
                missing.add("root (to encode as another uid)");
            }
        }
        for (String c : commands) {
            if (command(c) == null) {
                missing.add(c);
            }
        }
        try {
            Munge.open(Munge.DEFAULT_SOCKET);
        } catch (MungeException e) {
            missing.add(e.getMessage());
        }
        String why = "a real munged needs " + String.join(", ", missing) + " (apt-get install munge)";
        if (!missing.isEmpty() && "true".equals(System.getenv("CI"))) {
            throw new AssertionError("CI=true: " + why);
        }
        assumeTrue(missing.isEmpty(), why);
    }

    /** Starts a munged with a fresh key and waits until its socket accepts connections. */
    public static MungeD start() throws IOException, InterruptedException {
        requirePrerequisites(false);
        Path dir = Files.createTempDirectory("rsmap-munged");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path key = dir.resolve("munge.key");
        byte[] bytes = new byte[1024];
        new SecureRandom().nextBytes(bytes);
        Files.write(key, bytes);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("r--------"));
        Process p = new ProcessBuilder(command("munged").toString(), "--foreground", "--force",
                "--socket=" + dir.resolve("socket"), "--key-file=" + key, "--pid-file=" + dir.resolve("munged.pid"),
                "--log-file=" + dir.resolve("munged.log"), "--seed-file=" + dir.resolve("seed"))
                .redirectErrorStream(true).redirectOutput(dir.resolve("munged.out").toFile()).start();
        MungeD m = new MungeD(dir, p);
        Runtime.getRuntime().addShutdownHook(m.onExit);
        try {
            m.awaitSocket();
            return m;
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            m.close();
            throw e;
        }
    }

    public Path socket() {
        return dir.resolve("socket");
    }

    public Path dir() {
        return dir;
    }

    /** A Munge client of this munged. */
    public Munge munge() throws MungeException {
        return Munge.open(socket());
    }

    /**
     * {@code munge -S SOCKET -s PAYLOAD} (plus {@code options}) as {@code user} and its primary group via
     * setpriv (root only): a credential of that uid.
     */
    public String encodeAs(String user, String payload, String... options) throws IOException, InterruptedException {
        String gid = must(run(List.of("id", "-g", "--", user))).out().strip();
        List<String> cmd = new ArrayList<>(List.of(command("setpriv").toString(), "--reuid=" + user,
                "--regid=" + gid, "--clear-groups", "--", command("munge").toString(), "-S", socket().toString(),
                "-s", payload));
        cmd.addAll(List.of(options));
        return must(run(cmd)).out().strip();
    }

    /** {@code munge -S SOCKET -s PAYLOAD} (plus {@code options}) as this JVM's user. */
    public String encodeWithCli(String payload, String... options) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(command("munge").toString(), "-S", socket().toString(), "-s",
                payload));
        cmd.addAll(List.of(options));
        return must(run(cmd)).out().strip();
    }

    /** {@code unmunge -S SOCKET} with {@code credential} on its input: its metadata and payload, and exit code. */
    public Run unmunge(String credential) throws IOException, InterruptedException {
        Path in = Files.createTempFile("rsmap-unmunge", ".in");
        try {
            Files.writeString(in, credential + "\n");
            return run(List.of(command("unmunge").toString(), "-S", socket().toString(), "-i", in.toString()));
        } finally {
            Files.deleteIfExists(in);
        }
    }

    /** munged's log, for a failure message. */
    public String log() throws IOException {
        StringBuilder b = new StringBuilder();
        for (String f : new String[] {"munged.log", "munged.out"}) {
            Path p = dir.resolve(f);
            if (Files.exists(p)) {
                b.append("==> ").append(f).append(" <==\n").append(Files.readString(p, StandardCharsets.ISO_8859_1));
            }
        }
        return b.toString();
    }

    /** Stops munged by its pid and removes its directory. */
    @Override
    public void close() {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(onExit);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs (or ran) anyway
        }
    }

    private synchronized void stop() {
        if (closed) {
            return;
        }
        closed = true;
        process.destroy(); // SIGTERM to this pid
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        rsmap.daemon.Trees.deleteOrSay(dir, "munged");
    }

    /** Until a connect succeeds: the socket file appears at bind, before listen. */
    private void awaitSocket() throws IOException, InterruptedException {
        boolean served = Polls.await(Duration.ofSeconds(30), () -> {
            if (!process.isAlive()) {
                throw new IllegalStateException("munged is not running (exit " + process.exitValue() + "):\n" + log());
            }
            if (Files.exists(socket())) {
                try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                    c.connect(UnixDomainSocketAddress.of(socket()));
                    return true;
                } catch (IOException notYet) {
                    // listen() comes next
                }
            }
            return false;
        });
        if (!served) {
            throw new IllegalStateException("munged did not serve " + socket() + " in 30 s:\n" + log());
        }
    }

    private static Run must(Run r) {
        if (r.code() != 0) {
            throw new IllegalStateException("exit " + r.code() + ": " + r.err() + r.out());
        }
        return r;
    }

    private static Run run(List<String> command) throws IOException, InterruptedException {
        Path out = Files.createTempFile("rsmap-munge", ".out");
        Path err = Files.createTempFile("rsmap-munge", ".err");
        try {
            Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new IllegalStateException(command + " did not end in 30 s");
            }
            return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /** Where {@code name} is installed, or null. */
    private static Path command(String name) {
        return Stream.of("/usr/sbin", "/usr/bin", "/sbin", "/bin").map(d -> Path.of(d, name))
                .filter(Files::isExecutable).findFirst().orElse(null);
    }
}
