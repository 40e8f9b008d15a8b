// "Done when": the real rsmapd (bin/rsmapd, 64 MiB heap) under floods from user nobody
// - 10,000 idle connections, 500 holding unfinished maximum-size frames, 500 sending garbage - stays up,
// stays under 128 MiB resident, and answers root's JOB_START during each; the latencies are printed.
package rsmap.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

@Timeout(180)
class FloodIT {
    static final Path SOURCE = Path.of("src", "test", "c", "flood.c").toAbsolutePath();
    /** How long each flood runs; root's calls start after the first second of it. */
    static final int FLOOD_SECONDS = 8;
    /** A root call not answered within this counts as not answered. */
    static final long GUARD_SECONDS = 10;
    static final long RSS_LIMIT_KIB = 128 << 10;

    record Flood(String mode, int connections) {
    }

    record Figures(String what, List<Long> micros, long maxRssKiB, String flooder) {
        long pct(int p) {
            List<Long> s = new ArrayList<>(micros);
            Collections.sort(s);
            return s.get(Math.min(s.size() - 1, s.size() * p / 100));
        }

        String line() {
            return String.format("%-34s calls=%4d p50=%8.2f ms p99=%8.2f ms max=%8.2f ms  max VmRSS=%6.1f MiB  %s", what,
                    micros.size(), pct(50) / 1000.0, pct(99) / 1000.0, pct(100) / 1000.0, maxRssKiB / 1024.0, flooder);
        }
    }

    /** Root, setpriv and gcc, or the test cannot run: under CI=true that fails it, elsewhere it is skipped. */
    static void requirePrerequisites() {
        List<String> missing = new ArrayList<>();
        if (!"root".equals(System.getProperty("user.name"))) {
            missing.add("root (the floods run as user nobody through setpriv)");
        }
        for (String c : List.of("setpriv", "gcc")) {
            if (Stream.of("/usr/bin", "/bin", "/usr/sbin", "/sbin").noneMatch(d -> Files.isExecutable(Path.of(d, c)))) {
                missing.add(c);
            }
        }
        String why = "FloodIT needs " + String.join(", ", missing);
        if (!missing.isEmpty() && "true".equals(System.getenv("CI"))) {
            throw new AssertionError("CI=true: " + why);
        }
        assumeTrue(missing.isEmpty(), why);
    }

    @Test
    void floodsAsNobody_rootJobStartIsAnswered_daemonStaysUpAndUnder128MiB() throws Exception {
        requirePrerequisites();
        Path dir = Files.createTempDirectory("rsmap-flood");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x")); // nobody reaches the socket
        Path flood = dir.resolve("flood");
        run(List.of("gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-std=c11", "-D_GNU_SOURCE", "-o", flood.toString(),
                SOURCE.toString()));
        Rsmapd.configure(dir, "gpu=4(0 1 2 3)", "socket_mode = 0666", "reconcile_interval = 0");
        List<Figures> figures = new ArrayList<>();
        ExecutorService caller = Executors.newSingleThreadExecutor();
        try (Rsmapd daemon = Rsmapd.start(dir)) {
            assertThat(daemon.jvmOptions()).contains("-Xmx64m");
            AtomicLong job = new AtomicLong();
            for (int i = 0; i < 30; i++) { // warm-up: the daemon's JIT compiles the job path
                jobStart(daemon, caller, job.incrementAndGet());
            }
            figures.add(measure(daemon, caller, job, "idle daemon", null, 0));
            for (Flood f : List.of(new Flood("idle", 10_000), new Flood("frames", 500), new Flood("garbage", 500))) {
                Process flooder = new ProcessBuilder("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                        flood.toString(), f.mode(), daemon.socket().toString(), Integer.toString(f.connections()),
                        Integer.toString(FLOOD_SECONDS), Integer.toString(1 << 20))
                        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
                Thread.sleep(1000); // the benchmark's gap: let the flood build up before the measured calls
                figures.add(measure(daemon, caller, job, f.connections() + " " + f.mode() + " connections", flooder,
                        FLOOD_SECONDS - 2));
                assertAlive(daemon, "the " + f.mode() + " flood");
            }
        } finally {
            caller.shutdownNow();
            System.out.println("FloodIT: root's connect+INIT+JOB_START as user nobody floods rsmapd (-Xmx64m):");
            figures.forEach(x -> System.out.println("  " + x.line()));
            rsmap.daemon.Trees.delete(dir);
        }
        for (Figures x : figures) {
            assertThat(x.maxRssKiB()).as("VmRSS during %s", x.what()).isLessThan(RSS_LIMIT_KIB);
        }
    }

    /**
     * Root's job starts, one after another, for {@code seconds} (or 60 calls on the idle daemon), while
     * VmRSS is sampled; then the flooder's own line.
     */
    private Figures measure(Rsmapd daemon, ExecutorService caller, AtomicLong job, String what, Process flooder,
                            int seconds) throws Exception {
        assertAlive(daemon, what);
        AtomicLong maxRss = new AtomicLong(daemon.statusKiB("VmRSS"));
        Thread sampler = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    maxRss.accumulateAndGet(daemon.statusKiB("VmRSS"), Math::max);
                    Thread.sleep(50); // the sampler's pace
                } catch (IOException | InterruptedException e) {
                    return;
                }
            }
        });
        sampler.start();
        List<Long> micros = new ArrayList<>();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        try {
            do {
                assertAlive(daemon, what);
                micros.add(jobStart(daemon, caller, job.incrementAndGet()));
            } while (flooder == null ? micros.size() < 60 : System.nanoTime() < until);
        } finally {
            sampler.interrupt();
            sampler.join();
        }
        String said = "";
        if (flooder != null) {
            said = new String(flooder.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            assertThat(flooder.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(flooder.exitValue()).as("flooder: %s", said).isZero();
        }
        return new Figures(what, micros, maxRss.get(), said);
    }

    private static void assertAlive(Rsmapd daemon, String what) throws IOException {
        if (!daemon.alive()) {
            List<String> said = new ArrayList<>(Files.readAllLines(daemon.socket().resolveSibling("rsmapd.out")));
            said.addAll(Files.readAllLines(daemon.socket().resolveSibling("rsmapd.err")));
            throw new AssertionError("rsmapd died during " + what + "; the end of its output: "
                    + said.subList(Math.max(0, said.size() - 3), said.size()));
        }
    }

    /** connect, INIT, JOB_START as root, timed to the JOB_START's OK (the hook's path); then JOB_END, untimed. */
    private static long jobStart(Rsmapd daemon, ExecutorService caller, long job) throws Exception {
        Future<Long> call = caller.submit(() -> {
            long t0 = System.nanoTime();
            try (TestClient c = new TestClient(daemon.socket())) {
                assertThat(c.call(Frame.of(1, Code.INIT.value(), Session.VERSION))).containsExactly(Session.ok(1));
                List<Frame> start = c.call(Frame.of(2, Code.JOB_START.value(), "{\"job\":\"" + job
                        + "\",\"user\":\"alice\",\"slots\":1,\"request\":\"gpu=1\"}"));
                long took = (System.nanoTime() - t0) / 1000;
                assertThat(start).as("JOB_START of job %d", job).endsWith(Session.ok(2));
                assertThat(c.call(Frame.of(3, Code.JOB_END.value(), "{\"job\":\"" + job + "\"}")))
                        .containsExactly(Session.ok(3));
                return took;
            }
        });
        try {
            return call.get(GUARD_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            call.cancel(true);
            throw new AssertionError("root's JOB_START of job " + job + " was not answered within " + GUARD_SECONDS
                    + " s", e);
        }
    }

    private static void run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
        }
    }
}
