// The job's environment file: the SGE_HGR_* a job may use now, rewritten whenever a realloc or a release
// changes them (issue 13), for a job that was started before the change.
package rsmap.daemon;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;

/**
 * {@code <state_dir>/env/<job>}: one {@code NAME=value} line per map the job holds or held, the value
 * empty for a map all of whose instances were taken away (docs/realloc.md). Owned by the job's owner,
 * mode 0400, in a directory of root's, mode 0711 (nobody lists it): the job's owner reads it, no other
 * user does, and nobody but root writes it. Written whole to a temporary file (created new, never through
 * a link) and renamed, so a reader sees the old or the new content, never half. Written at JOB_START, after every
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

    void write(String job, String user, Map<String, String> env) {
        if (dir == null) {
            return;
        }
        StringBuilder b = new StringBuilder();
        env.forEach((k, v) -> b.append(k).append('=').append(v).append('\n'));
        try {
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                    throw new IOException(dir + " is not a directory (a link?): not written through");
                }
                Files.createDirectories(dir);
            }
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
            Path tmp = dir.resolve("." + job + ".tmp");
            Files.deleteIfExists(tmp); // a link is removed, not followed
            try (var out = Files.newByteChannel(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
                out.write(java.nio.ByteBuffer.wrap(b.toString().getBytes(StandardCharsets.UTF_8)));
            }
            try {
                Files.setOwner(tmp, tmp.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(user));
                Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("r--------"));
            } catch (IOException e) {
                log.note(Log.Level.WARNING, "job " + job + ": its environment file " + of(job) + " stays readable by "
                        + "root only: cannot give it to '" + user + "': " + e);
            }
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
