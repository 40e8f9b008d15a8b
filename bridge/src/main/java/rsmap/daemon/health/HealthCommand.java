// A site's own health check (health_command, docs/health.md): run as root with a timeout, its output
// read as one verdict per line, "MAP ID ok" or "MAP ID taint REASON...".
package rsmap.daemon.health;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import rsmap.daemon.config.ConfigText;
import rsmap.daemon.state.Taint;

/**
 * The command runs with no argument, stdin from /dev/null, stdout to a file (a child left holding it
 * cannot hang the read), stderr to rsmapd's. It must exit 0 within {@code health_timeout}: one that fails,
 * or is killed at its timeout with every process it started, changes nothing and is logged. Lines that
 * do not read are logged and skipped; at most {@link #MAX_OUTPUT} bytes are read.
 */
final class HealthCommand {
    static final int MAX_OUTPUT = 1 << 20;

    /** One verdict: {@code reason} empty for ok. */
    record Verdict(String map, String id, boolean ok, String reason) {
    }

    /** What a run gave: its verdicts, or why none (failed, timed out), and the lines skipped. */
    record Run(Optional<String> failed, List<Verdict> verdicts, List<String> skipped) {
        Run {
            verdicts = List.copyOf(verdicts);
            skipped = List.copyOf(skipped);
        }
    }

    private HealthCommand() {
    }

    static Run run(Path command, int timeoutSeconds) {
        Path out = null;
        Process p = null;
        try {
            out = Files.createTempFile("rsmap-health", ".out");
            p = new ProcessBuilder(command.toString()).redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null")
                    .toFile())).redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                kill(p);
                p.waitFor(5, TimeUnit.SECONDS);
                return failed(command + " did not finish within health_timeout (" + timeoutSeconds
                        + " s): killed; nothing changed");
            }
            if (p.exitValue() != 0) {
                return failed(command + " exited " + p.exitValue() + "; nothing changed");
            }
            byte[] bytes;
            try (var in = Files.newInputStream(out)) {
                bytes = in.readNBytes(MAX_OUTPUT);
            }
            return parse(new String(bytes, StandardCharsets.UTF_8));
        } catch (IOException e) {
            return failed(command + ": " + e.getMessage() + "; nothing changed");
        } catch (InterruptedException e) {
            kill(p); // rsmapd stops: the check goes with it
            Thread.currentThread().interrupt();
            return failed(command + ": interrupted; nothing changed");
        } finally {
            if (out != null) {
                try {
                    Files.deleteIfExists(out);
                } catch (IOException e) {
                    // a temporary file left in /tmp: the system's cleaning takes it
                }
            }
        }
    }

    /** The command and every process it started (the descendants first: they would be orphaned). */
    private static void kill(Process p) {
        if (p != null) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    private static Run failed(String why) {
        return new Run(Optional.of(why), List.of(), List.of());
    }

    /** The verdicts of {@code output}; blank lines and lines starting with # are nothing. */
    static Run parse(String output) {
        List<Verdict> verdicts = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        String[] lines = output.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] w = line.split("\\s+", 4);
            String at = "line " + (i + 1) + ": ";
            if (w.length < 3 || !(w[2].equals("ok") && w.length == 3 || w[2].equals("taint"))) {
                skipped.add(at + "expected 'MAP ID ok' or 'MAP ID taint REASON', got '" + ConfigText.printable(line) + "'");
            } else if (line.chars().anyMatch(c -> c < 0x20 && c != '\t' || c == 0x7f)) {
                skipped.add(at + "control characters");
            } else {
                String reason = w[2].equals("ok") ? "" : w.length == 4 ? w[3] : "check failed";
                verdicts.add(new Verdict(w[0], w[1], w[2].equals("ok"),
                        reason.length() > Taint.MAX_REASON ? reason.substring(0, Taint.MAX_REASON) : reason));
            }
        }
        return new Run(Optional.empty(), verdicts, skipped);
    }
}
