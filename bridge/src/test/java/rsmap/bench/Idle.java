// The JVM baseline of the daemon benchmarks: a main that says "ready" and idles until its stdin closes,
// run with the very JVM options bin/rsmapd gave the daemon.
package rsmap.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

public final class Idle implements AutoCloseable {
    private final Process process;
    private final long readyNanos;

    private Idle(Process process, long readyNanos) {
        this.process = process;
        this.readyNanos = readyNanos;
    }

    public static void main(String[] args) throws IOException {
        System.out.println("ready");
        System.out.flush();
        while (System.in.read() >= 0) {
            // idle until the harness closes our stdin
        }
    }

    /** Starts {@code java OPTIONS -cp <this classpath> rsmap.bench.Idle} and returns once it said ready. */
    static Idle start(List<String> jvmOptions) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Idle.class.getName()));
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
        long ready = System.nanoTime() - t0;
        if (!"ready".equals(line)) {
            p.destroyForcibly();
            throw new IllegalStateException("the idle JVM said " + line);
        }
        return new Idle(p, ready);
    }

    /** From the exec of the JVM to its "ready" line. */
    long readyNanos() {
        return readyNanos;
    }

    long statusKiB(String field) throws IOException {
        return Rsmapd.statusKiB(process.pid(), field);
    }

    @Override
    public void close() throws IOException {
        process.getOutputStream().close();
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
