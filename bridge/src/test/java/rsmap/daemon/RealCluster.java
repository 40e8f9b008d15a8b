// A real workload manager's test cluster (SlurmCluster, GridEngineCluster): its daemons, rsmapd among them, as
// children of this JVM - started, awaited with a bound, stopped once by pid - what rsmapd holds, and what they leave.
package rsmap.daemon;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.stream.Stream;
import rsmap.wire.Client;
import rsmap.wire.Code;
import rsmap.wire.HeldGrants;
import rsmap.wire.Ports;
import rsmap.wire.Polls;

/**
 * One test cluster in {@link #dir}: rsmapd on {@link #host()} serves {@code gpu}, two fake cards ({@link #device}),
 * at {@link #socket()}. {@link #stop()} runs once: at {@link #close}, or at the JVM's exit before.
 */
public abstract class RealCluster implements AutoCloseable {
    /** What a command said. */
    protected record Ran(int code, String out, String err) {
    }

    /** The cluster's authority: munged's socket, the loopback port the authority listens on, its Unix socket. */
    public record ClusterAuthority(Path mungeSocket, int port, Path socket) {
        /** What the host's rsmapd.conf adds to register with it. */
        public List<String> hostLines() {
            return List.of("authority = 127.0.0.1:" + port, "munge_socket = " + mungeSocket);
        }
    }

    /** Everything of this cluster: configuration, logs, state; removed at {@link #close}. */
    public final Path dir;
    /** Where jobs run and write, writable by all. */
    public final Path work;
    private final List<Process> started = new ArrayList<>();
    private final Thread onExit;
    private boolean stopped;

    /** Registers {@link #stop()} to run at the JVM's exit, in a thread called {@code name}-stop. */
    protected RealCluster(String name, Path dir) {
        this.dir = dir;
        this.work = dir.resolve("work");
        this.onExit = new Thread(this::stopOnce, name + "-stop");
        Runtime.getRuntime().addShutdownHook(onExit);
    }

    /** The host rsmapd serves. */
    public abstract String host();

    /** rsmapd's socket. */
    public Path socket() {
        return dir.resolve("rsmapd.sock");
    }

    /** Fake card {@code i} (0 or 1): mknod c 195 i. */
    public Path device(int i) {
        return dir.resolve("dev").resolve("nvidia" + i);
    }

    /** The cluster's logs, for a failure message. */
    public abstract String logs() throws IOException;

    /** Starts the cluster's daemons and waits until jobs can run. */
    protected abstract void startAll() throws IOException, InterruptedException;

    /** The cluster's own stop: its jobs, {@link #stopDaemons}, what they left. */
    protected abstract void stop();

    /** Runs {@code command} in the cluster's environment; an exit other than 0 throws, with what it said. */
    protected abstract void mustRun(List<String> command) throws IOException, InterruptedException;

    /** Starts daemon {@code name} in the cluster's environment, its output in log/NAME.out; kept to stop. */
    protected abstract Process spawn(String name, List<String> command) throws IOException;

    /**
     * munged with a key of its own (under munge/, mode 0755: a job owner's client reaches its socket) and an
     * rsmapd of role authority on a free loopback port (authority.conf, on the complex table complexes that the
     * cluster wrote), both kept to stop; the host's rsmapd registers with it through {@link ClusterAuthority#hostLines}.
     */
    protected ClusterAuthority startAuthority() throws IOException, InterruptedException {
        Path munge = Files.createDirectories(dir.resolve("munge"));
        Files.setPosixFilePermissions(munge, PosixFilePermissions.fromString("rwxr-xr-x"));
        mustRun(List.of("mungekey", "--create", "--force", "--keyfile=" + munge.resolve("munge.key")));
        Path mungeSocket = munge.resolve("socket");
        spawn("munged", List.of("munged", "--foreground", "--force", "--socket=" + mungeSocket,
                "--key-file=" + munge.resolve("munge.key"), "--pid-file=" + munge.resolve("munged.pid"),
                "--seed-file=" + munge.resolve("seed"), "--log-file=" + dir.resolve("log/munged.log")));
        awaitFile(mungeSocket, "munged");
        int port = Ports.free();
        Files.writeString(dir.resolve("authority.conf"), String.join("\n", "role = authority", "complexes = complexes",
                "listen = 127.0.0.1:" + port, "socket = authority.sock", "state_dir = authority-state",
                "munge_socket = " + mungeSocket, "reconcile_interval = 0") + "\n");
        spawn("authority", rsmapd(dir.resolve("authority.conf")));
        awaitFile(dir.resolve("authority.sock"), "the authority");
        return new ClusterAuthority(mungeSocket, port, dir.resolve("authority.sock"));
    }

    /** Skips a test when something is {@code missing} (saying {@code why}); under CI=true fails instead. */
    protected static void require(List<String> missing, String why) {
        if (!missing.isEmpty() && "true".equals(System.getenv("CI"))) {
            throw new AssertionError("CI=true: " + why);
        }
        assumeTrue(missing.isEmpty(), why);
    }

    /** {@code c} after its {@link #startAll()}; closed when that fails. */
    protected static <C extends RealCluster> C started(C c) throws IOException, InterruptedException {
        try {
            c.startAll();
            return c;
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            c.close();
            throw e;
        }
    }

    /** {@link #work}, writable by all, and both fake cards, readable and writable by all (the devices cgroup decides). */
    protected void makeWorkAndDevices() throws IOException, InterruptedException {
        Files.createDirectories(work);
        Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwxrwxrwx"));
        Files.createDirectories(dir.resolve("dev"));
        for (int i = 0; i < 2; i++) {
            List<String> mknod = List.of("mknod", device(i).toString(), "c", "195", Integer.toString(i));
            Ran r = finish(new ProcessBuilder(mknod), mknod, 30);
            if (r.code() != 0) {
                throw new IllegalStateException(mknod + " exited " + r.code() + ": " + r.err());
            }
            Files.setPosixFilePermissions(device(i), PosixFilePermissions.fromString("rw-rw-rw-"));
        }
    }

    /** What rsmapd holds: job (job.task for an array task) -> its gpu identifiers on this host (QUERY as root). */
    public Map<String, List<String>> held() throws Exception {
        return HeldGrants.of(socket(), host(), "gpu");
    }

    /** Waits until rsmapd holds nothing for {@code job} (null: for any job); returns what it still holds. */
    public Map<String, List<String>> awaitReleased(String job) throws Exception {
        return HeldGrants.awaitReleased(socket(), host(), "gpu", job);
    }

    /** Keeps {@code p} to stop; returns it. */
    protected Process daemon(Process p) {
        started.add(p);
        return p;
    }

    /** Whether no daemon was started. */
    protected boolean noDaemons() {
        return started.isEmpty();
    }

    /** Until {@code file} exists (30 s); fails at once, with the logs, when a daemon has exited meanwhile. */
    public void awaitFile(Path file, String who) throws IOException, InterruptedException {
        Polls.await(Duration.ofSeconds(30), () -> {
            for (Process p : started) {
                if (!p.isAlive()) {
                    throw new IllegalStateException(who + " is not running (exit " + p.exitValue() + "):\n" + logs());
                }
            }
            return Files.exists(file);
        });
        if (!Files.exists(file)) {
            throw new IllegalStateException(who + " did not create " + file + " in 30 s:\n" + logs());
        }
    }

    /** Stops every daemon by its pid, the last started first when {@code lastFirst}: SIGTERM, 15 s, then SIGKILL. */
    protected void stopDaemons(boolean lastFirst) {
        List<Process> order = new ArrayList<>(started);
        if (lastFirst) {
            java.util.Collections.reverse(order);
        }
        for (Process p : order) {
            p.destroy(); // SIGTERM to this pid
            try {
                if (!p.waitFor(15, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Runs the cluster's stop (once) and forgets the exit hook. */
    @Override
    public final void close() {
        stopOnce();
        try {
            Runtime.getRuntime().removeShutdownHook(onExit);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs (or ran) anyway
        }
    }

    private synchronized void stopOnce() {
        if (!stopped) {
            stopped = true;
            stop();
        }
    }

    /** rsmapd's Main on {@code conf}, in a JVM of its own (this test's class path). */
    public static List<String> rsmapd(Path conf) {
        return List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), "rsmap.daemon.Main", "--config", conf.toString());
    }

    /** Both clusters' gpu map: two fake cards, each shared four ways, {@code gpu0} an A100, {@code gpu1} an H100. */
    protected static String gpuMap(IntFunction<Path> device) {
        StringBuilder gpu = new StringBuilder("gpu=8(");
        for (int i = 0; i < 8; i++) {
            int card = i / 4;
            gpu.append(i == 0 ? "" : " ").append("gpu").append(card).append("[devices=").append(device.apply(card))
                    .append(":rw,model=").append(card == 0 ? "A100" : "H100").append(']');
        }
        return gpu.append(')').toString();
    }

    /** Until the rsmapd of {@link #host()} has registered with {@code authority} (its link connects in the background; 30 s). */
    protected void awaitRegistered(Path authority) throws IOException, InterruptedException {
        boolean registered = Polls.await(Duration.ofSeconds(30), () -> {
            try (Client c = Client.connect(authority)) {
                String q = c.call(Code.QUERY, "{\"cluster\":true}").get(0).text(0);
                return q.contains("\"" + host() + "\":{\"connected\":true");
            } catch (IOException | Client.Refusal e) {
                return false; // not yet
            }
        });
        if (!registered) {
            throw new IllegalStateException("the rsmapd of " + host() + " did not register with the authority\n" + logs());
        }
    }


    /** Runs {@code pb} to its end, at most {@code seconds}; what it wrote to stdout and stderr. */
    protected static Ran finish(ProcessBuilder pb, List<String> command, int seconds) throws IOException, InterruptedException {
        Path out = Files.createTempFile("rsmap-run", ".out");
        Path err = Files.createTempFile("rsmap-run", ".err");
        try {
            Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new IllegalStateException(command + " did not end in " + seconds + " s");
            }
            return new Ran(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /** One attempt: kills the processes in cgroup {@code top} and below (never this JVM), removes the empty cgroups. */
    private static void killAndRemove(Path top) {
        try (Stream<Path> s = Files.walk(top)) {
            List<Path> dirs = s.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).toList();
            for (Path d : dirs) {
                for (String pid : Files.readAllLines(d.resolve("cgroup.procs"))) {
                    if (!pid.isBlank() && Long.parseLong(pid.strip()) != ProcessHandle.current().pid()) {
                        ProcessHandle.of(Long.parseLong(pid.strip())).ifPresent(ProcessHandle::destroyForcibly);
                    }
                }
            }
            for (Path d : dirs) {
                try {
                    Files.delete(d); // rmdir of an empty cgroup
                } catch (IOException busy) {
                    // its processes are still exiting: next attempt
                }
            }
        } catch (IOException | RuntimeException e) {
            // gone meanwhile, or still busy: next attempt
        }
    }

    /** Kills the processes left in cgroup {@code top} and below (never this JVM), and removes them; 5 s at most. */
    protected static void removeCgroup(Path top, String who) {
        if (!Files.isDirectory(top)) {
            return;
        }
        try {
            Polls.await(Duration.ofSeconds(5), () -> {
                killAndRemove(top);
                return !Files.isDirectory(top);
            });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (Files.isDirectory(top)) {
            System.err.println(who + ": could not remove cgroup " + top);
        }
    }

    /** This machine's name as {@code command} prints it ({@code hostname}, {@code hostname -s}); localhost if none. */
    protected static String hostName(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String h = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            p.waitFor();
            return h.isEmpty() ? "localhost" : h;
        } catch (IOException e) {
            return "localhost";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "localhost";
        }
    }
}
