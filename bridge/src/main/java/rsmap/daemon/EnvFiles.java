// The job's environment file: the SGE_HGR_* a job may use now, rewritten whenever a realloc or a release
// changes them (issue 13), for a job that was started before the change.
package rsmap.daemon;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/**
 * {@code <state_dir>/env/<job>}: one {@code NAME=value} line per map the job holds or held, the value
 * empty for a map all of whose instances were taken away (docs/realloc.md). Root's, mode 0644 in a
 * directory of mode 0755: the job reads it, never writes it. Written whole to a temporary file and
 * renamed, so a reader sees the old or the new content, never half. Written at JOB_START, after every
 * change, removed at JOB_END. A failure to write is logged, never fails the command: the answer carries
 * the same lines.
 */
final class EnvFiles {
    /** Where the files go; null: nowhere (an authority runs no job, nothing reads them there). */
    private final Path dir;
    private final LogBook log;

    EnvFiles(Path stateDir, LogBook log) {
        this.dir = stateDir.resolve("env");
        this.log = log;
    }

    private EnvFiles() {
        this.dir = null;
        this.log = null;
    }

    /** No environment files at all. */
    static EnvFiles none() {
        return new EnvFiles();
    }

    /** The file of {@code job} (job ids are [A-Za-z0-9_+-] and '.': no path separators). */
    Path of(String job) {
        return dir.resolve(job);
    }

    void write(String job, Map<String, String> env) {
        if (dir == null) {
            return;
        }
        StringBuilder b = new StringBuilder();
        env.forEach((k, v) -> b.append(k).append('=').append(v).append('\n'));
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir);
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
            }
            Path tmp = dir.resolve("." + job + ".tmp");
            Files.writeString(tmp, b, StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
            try {
                Files.move(tmp, of(job), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, of(job), StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException | UnsupportedOperationException e) {
            log.note(Log.Level.WARNING, "job " + job + ": cannot write its environment file " + of(job) + ": " + e);
        }
    }

    void remove(String job) {
        if (dir == null) {
            return;
        }
        try {
            Files.deleteIfExists(of(job));
        } catch (IOException e) {
            log.note(Log.Level.WARNING, "job " + job + ": cannot remove its environment file " + of(job) + ": " + e);
        }
    }
}
