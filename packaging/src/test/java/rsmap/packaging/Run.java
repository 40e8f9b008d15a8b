// Runs a command to its end (at most a few minutes) and keeps its exit code and merged output.
package rsmap.packaging;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

record Run(int code, String output) {

    /** {@code env} entries are NAME=value, added to this process's environment. */
    static Run of(List<String> command, String... env) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        for (String kv : env) {
            pb.environment().put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IOException("timed out: " + command);
        }
        return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    /** Like {@link #of} but an exit code other than 0 is an error that shows the output. */
    static String ok(List<String> command, String... env) throws IOException, InterruptedException {
        Run r = of(command, env);
        if (r.code() != 0) {
            throw new AssertionError(String.join(" ", command) + " exited " + r.code() + ":\n" + r.output());
        }
        return r.output();
    }
}
