// The job's environment file: the SGE_HGR_* a job may use now, rewritten whenever a realloc or a release
// changes them, for a job that was started before the change.
package rsmap.daemon.devices;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.List;
import java.util.Map;
import java.util.Set;
import rsmap.daemon.state.AfterAnswer;
import rsmap.daemon.state.Job;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.daemon.state.JobId;

/**
 * {@code <state_dir>/env/<job>}: one {@code NAME=value} line per map the job holds or held, the value
 * empty for a map all of whose instances were taken away (docs/realloc.md). Owned by the job's owner,
 * mode 0400, in a directory of root's, mode 0711 (nobody lists it): the job's owner reads it, no other
 * user does, and nobody but root writes it. Written whole to a temporary file (created new, never through
 * a link) and renamed, so a reader sees the old or the new content, never half. Written once the JOB_START
 * that granted the job is answered ({@link #settle}: before the daemon runs its next command, so before the
 * job's JOB_ENTER; a restart makes again what a kill left out), after every change, removed at JOB_END. A
 * failure to write is logged, never fails the command: the answer carries the same lines. The owner's uid
 * is remembered for {@link #OWNER_TTL_NANOS} (docs/isolation.md).
 */
public final class EnvFiles implements AfterAnswer.Files {
    /**
     * How long a job owner's uid, once looked up, is used without asking the name service again: a user
     * renumbered or removed while rsmapd runs shows in the files written after at most this long.
     */
    static final long OWNER_TTL_NANOS = 60_000_000_000L;
    /** Owners remembered at most (a host runs the jobs of a few users at a time). */
    static final int OWNERS_KEPT = 256;
    private static final java.nio.file.attribute.FileAttribute<?> ROOT_ONLY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
    private static final java.nio.file.attribute.FileAttribute<?> ROOT_READ_ONLY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("r--------"));
    private static final Set<java.nio.file.attribute.PosixFilePermission> READ_ONLY =
            PosixFilePermissions.fromString("r--------");
    private static final Set<java.nio.file.OpenOption> CREATE = Set.of(StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);

    /** Where the files go; null: nowhere (an authority runs no job, nothing reads them there). */
    private final Path dir;
    private final LogBook log;
    /** The name service: a user's principal by name (getpwnam through nsswitch). */
    private final Lookup lookup;
    private final java.util.function.LongSupplier clock;
    /** Job owners looked up lately, each with when (the clock's nanoseconds) (guarded by this). */
    private final Map<String, Owner> owners = new java.util.HashMap<>();
    /** env/'s mode: every job owner reaches their file through it, nobody lists it. */
    private static final Set<java.nio.file.attribute.PosixFilePermission> DIR_MODE = PosixFilePermissions.fromString("rwx--x--x");

    /** A user's principal by name, or an IOException saying why there is none. */
    interface Lookup {
        UserPrincipal owner(String user) throws IOException;
    }

    private record Owner(UserPrincipal principal, long since) {
    }

    /** A file to write once its command is answered: the owner's and what it says. */
    private record Due(String user, Map<String, String> env) {
    }

    /** Files waiting for their command's answer ({@link #settle}), by job (guarded by the daemon's lock). */
    private final Map<JobId, Due> due = new java.util.LinkedHashMap<>();
    /** Whether {@link #due} holds any: read by a worker before it takes the lock. */
    private volatile boolean anyDue;

    public EnvFiles(Path stateDir, LogBook log) {
        this(stateDir, log, user -> stateDir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(user),
                System::nanoTime);
    }

    /** With the name service and clock given (tests of how long an owner is remembered). */
    public EnvFiles(Path stateDir, LogBook log, Lookup lookup, java.util.function.LongSupplier clock) {
        this.dir = stateDir.resolve("env");
        this.log = log;
        this.lookup = lookup;
        this.clock = clock;
    }

    private EnvFiles() {
        this.dir = null;
        this.log = null;
        this.lookup = null;
        this.clock = null;
    }

    /** No environment files at all. */
    public static EnvFiles none() {
        return new EnvFiles();
    }

    /** The file of {@code job} (job ids are [A-Za-z0-9_+-] and '.': no path separators). */
    Path of(JobId job) {
        return dir.resolve(job.toString());
    }

    /**
     * {@link #write}, or with {@code afterAnswer} kept until {@link #settle}: a job's first file waits for
     * the answer of the JOB_START that granted it, since nothing reads it before the job's JOB_ENTER.
     */
    void write(JobId job, String user, Map<String, String> env, boolean afterAnswer) {
        if (afterAnswer && dir != null) {
            due.put(job, new Due(user, env));
            anyDue = true;
            return;
        }
        write(job, user, env);
    }

    /** Whether files are written at all (not on an authority). */
    @Override
    public boolean writes() {
        return dir != null;
    }

    /** Whether a file waits for {@link #settle} (read without the daemon's lock). */
    @Override
    public boolean unsettled() {
        return anyDue;
    }

    /** Writes the files that waited for their command's answer, in the order they were asked for. */
    @Override
    public void settle() {
        if (!anyDue) {
            return;
        }
        List<Map.Entry<JobId, Due>> now = List.copyOf(due.entrySet());
        due.clear();
        anyDue = false;
        for (Map.Entry<JobId, Due> e : now) {
            try {
                write(e.getKey(), e.getValue().user(), e.getValue().env());
            } catch (RuntimeException x) { // the next client's command is not the one to fail for it
                log.note(Log.Level.WARNING, "job " + e.getKey() + ": cannot write its environment file " + of(e.getKey())
                        + ": " + x);
            }
        }
    }

    void write(JobId job, String user, Map<String, String> env) {
        if (dir == null) {
            return;
        }
        if (anyDue) {
            due.remove(job); // this content is newer
        }
        StringBuilder b = new StringBuilder();
        env.forEach((k, v) -> b.append(k).append('=').append(v).append('\n'));
        byte[] content = b.toString().getBytes(StandardCharsets.UTF_8);
        try {
            directory();
            if (fresh(job, user, content)) {
                return;
            }
            Path tmp = dir.resolve("." + job + ".tmp");
            try (var out = create(tmp)) {
                out.write(java.nio.ByteBuffer.wrap(content));
            }
            try {
                Files.setOwner(tmp, owner(user));
                Files.setPosixFilePermissions(tmp, READ_ONLY);
            } catch (IOException e) {
                cannotGive(job, user, e);
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

    /**
     * A job's first file, the way a job start pays least for it: created in place (never through a link:
     * a name taken already, by an older file or a planted link, makes this false and the caller writes
     * through a temporary file and a rename), mode 0400 and root's from the start, written, then given to
     * its owner. Nobody but root reads it before it is whole: the owner gets it after the last byte.
     */
    private boolean fresh(JobId job, String user, byte[] content) throws IOException {
        Path f = of(job);
        try (var out = Files.newByteChannel(f, CREATE, ROOT_READ_ONLY)) {
            try {
                out.write(java.nio.ByteBuffer.wrap(content));
            } catch (IOException e) {
                Files.deleteIfExists(f); // not left half written
                throw e;
            }
        } catch (java.nio.file.FileAlreadyExistsException e) {
            return false;
        }
        try {
            Files.setOwner(f, owner(user));
        } catch (IOException e) {
            cannotGive(job, user, e);
        }
        return true;
    }

    private void cannotGive(JobId job, String user, IOException e) {
        log.note(Log.Level.WARNING, "job " + job + ": its environment file " + of(job) + " stays readable by root only:"
                + " cannot give it to '" + user + "': " + e);
    }

    /**
     * The directory, made if missing, and set back to 0711 when its mode changed (nobody may list the jobs):
     * one lstat a file, and a link or another file in its place is refused.
     */
    private void directory() throws IOException {
        PosixFileAttributes a;
        try {
            a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (java.nio.file.NoSuchFileException e) {
            Files.createDirectories(dir);
            a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        }
        if (!a.isDirectory()) {
            throw new IOException(dir + " is not a directory (a link?): not written through");
        }
        if (!a.permissions().equals(DIR_MODE)) {
            Files.setPosixFilePermissions(dir, DIR_MODE);
        }
    }

    /**
     * A new temporary file, never through a link: one left behind (a kill between create and rename, or a
     * link planted there) is removed and the file created anew; a directory removed since is made again.
     */
    private java.nio.channels.SeekableByteChannel create(Path tmp) throws IOException {
        try {
            return Files.newByteChannel(tmp, CREATE, ROOT_ONLY);
        } catch (java.nio.file.FileAlreadyExistsException e) {
            Files.deleteIfExists(tmp); // a link is removed, not followed
        } catch (java.nio.file.NoSuchFileException e) {
            directory(); // removed since it was checked: made anew
        }
        return Files.newByteChannel(tmp, CREATE, ROOT_ONLY);
    }

    /**
     * The owner's principal, looked up at most once per {@link #OWNER_TTL_NANOS} (the name service reads
     * /etc/passwd or asks sssd on every lookup, which cost a job start more than the rest of its file); a
     * user not found is asked again at the next write.
     */
    synchronized UserPrincipal owner(String user) throws IOException {
        long now = clock.getAsLong();
        Owner o = owners.get(user);
        if (o != null && now - o.since() < OWNER_TTL_NANOS) {
            return o.principal();
        }
        UserPrincipal p = lookup.owner(user);
        if (owners.size() >= OWNERS_KEPT) {
            owners.clear();
        }
        owners.put(user, new Owner(p, now));
        return p;
    }

    /**
     * What the file of {@code job} says, name by name (start-up reads what a job was told); empty when there is
     * none, it cannot be read, or it is not a plain file of at most 1 MiB. Never through a link.
     */
    Map<String, String> read(JobId job) {
        if (dir == null) {
            return Map.of();
        }
        try {
            if (!Files.readAttributes(of(job), PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isRegularFile()) {
                return Map.of(); // a FIFO would block the open
            }
        } catch (IOException | UnsupportedOperationException e) {
            return Map.of();
        }
        return contents(of(job));
    }

    /** {@link #read} of {@code f}, known to be a plain file. */
    private static Map<String, String> contents(Path f) {
        Map<String, String> env = new java.util.LinkedHashMap<>();
        try (var in = Files.newByteChannel(f, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            if (in.size() > 1 << 20) {
                return Map.of();
            }
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate((int) in.size());
            while (b.hasRemaining() && in.read(b) > 0) {
                // whole
            }
            for (String line : new String(b.array(), 0, b.position(), StandardCharsets.UTF_8).split("\n")) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    env.put(line.substring(0, eq), line.substring(eq + 1));
                }
            }
        } catch (IOException | UnsupportedOperationException e) {
            return Map.of();
        }
        return env;
    }

    /**
     * Start-up: each of {@code jobs}' files made again where it is not as {@link #write} leaves it: missing,
     * not saying the job's environment, not a plain file of mode 0400, or not its owner's (root's stays
     * right for an owner the name service does not know, as {@link #write} then leaves it). Each owner and
     * each file owner's uid is looked up once (10,000 jobs of unknown users must not cost 10,000 lookups).
     */
    void agree(java.util.Collection<Job> jobs) {
        if (dir == null) {
            return;
        }
        Map<String, java.util.Optional<UserPrincipal>> wanted = new java.util.HashMap<>();
        Map<Integer, UserPrincipal> byUid = new java.util.HashMap<>();
        for (Job j : jobs) {
            if (!agrees(j, wanted, byUid)) {
                write(j.id(), j.user(), j.env());
            }
        }
    }

    private boolean agrees(Job j, Map<String, java.util.Optional<UserPrincipal>> wanted,
                           Map<Integer, UserPrincipal> byUid) {
        Path f = of(j.id());
        Map<String, Object> a;
        try {
            a = Files.readAttributes(f, "unix:mode,uid", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | RuntimeException e) {
            return false; // none (or no unix view: written again, as before)
        }
        int mode = (Integer) a.get("mode");
        if ((mode & 0170000) != 0100000 || (mode & 07777) != 0400) {
            return false;
        }
        java.util.Optional<UserPrincipal> want = wanted.computeIfAbsent(j.user(), u -> {
            try {
                return java.util.Optional.of(lookup.owner(u));
            } catch (IOException e) {
                return java.util.Optional.empty();
            }
        });
        if (want.isPresent()) {
            UserPrincipal has = byUid.get((Integer) a.get("uid"));
            if (has == null) {
                try {
                    has = Files.getOwner(f, LinkOption.NOFOLLOW_LINKS);
                } catch (IOException e) {
                    return false;
                }
                byUid.put((Integer) a.get("uid"), has);
            }
            if (!has.equals(want.get())) {
                return false;
            }
        }
        return contents(f).equals(j.env()); // a plain file, as its mode said
    }

    void remove(JobId job) {
        if (dir == null) {
            return;
        }
        if (anyDue) {
            due.remove(job);
        }
        try {
            Files.deleteIfExists(of(job));
        } catch (IOException e) {
            log.note(Log.Level.WARNING, "job " + job + ": cannot remove its environment file " + of(job) + ": " + e);
        }
    }
}
