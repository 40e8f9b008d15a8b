// The jobs' CDI specs in cdi_dir (docs/containers.md): one file per job holding devices, written whole and
// renamed, rewritten when its grant changes, removed at its end; start-up and reconciliation remove the rest.
package rsmap.daemon.devices;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.cdi.CdiSpec;
import rsmap.daemon.config.CdiSettings;
import rsmap.daemon.config.GpuSettings;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.JobId;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.map.Instance;

/**
 * {@code <cdi_dir>/rsmapd-job-<name>.json}, kind {@code rsmap.io/job}, one device {@code <name>}
 * ({@link CdiSpec#jobDeviceName}), root's, mode 0644 (every runtime reads it; only root writes it). A file
 * is written to a temporary name beginning with a dot, then renamed over the old one: a runtime
 * reads the old or the new spec, never half. Only files named {@link #PREFIX}... are rsmapd's: nothing else
 * in the directory is read, changed or removed. Called under the daemon's lock.
 */
public final class CdiSpecs {
    /** The start of every file name rsmapd writes in cdi_dir; what {@link #sync} may remove. */
    static final String PREFIX = "rsmapd-job-";
    /** The job's variable naming its CDI device ({@code rsmap.io/job=NAME}). */
    static final String VARIABLE = "RSMAP_CDI_DEVICE";
    /**
     * Where a test stops the daemon or changes cdi_dir under it; the daemon's own is {@link #NONE}. Reached
     * with {@code "write"} before a live write of a spec and {@code "remove"} before a removal: a crash
     * test's daemon (test sources, FaultingMain) stops there to be killed between the journal and the spec;
     * start-up and reconciliation never reach these. Reached with {@code "permissions"} in every write
     * between the temporary file's bytes and its mode: a test swaps the file for a link there.
     */
    public interface FaultPoint {
        public FaultPoint NONE = op -> { };

        void reached(String op);
    }

    public static final CdiSpecs NONE = new CdiSpecs(new CdiSettings(CdiSettings.Mode.OFF, CdiSettings.DEFAULT_DIR), null);

    private final CdiSettings settings;
    private final LogBook log;
    private final FaultPoint faults;
    /** The content of each job's file as last written or found (a write of the same content is skipped). */
    private final Map<JobId, String> written = new HashMap<>();
    /**
     * The job just brought in step by {@link #held}, the very instance: a start asks twice in a row (before its
     * record, and when the job is held), and the second finds nothing to do. Any other call forgets it.
     */
    private Job inStep;
    /** Whether a host with {@code cdi = off} has removed the specs an earlier run with it on left. */
    private boolean offSwept;

    public CdiSpecs(CdiSettings settings, LogBook log) {
        this(settings, log, FaultPoint.NONE);
    }

    /** The same, stopping at {@code faults} (a test's). */
    public CdiSpecs(CdiSettings settings, LogBook log, FaultPoint faults) {
        this.settings = settings;
        this.log = log;
        this.faults = faults;
    }

    boolean on() {
        return settings.on();
    }

    boolean required() {
        return settings.mode() == CdiSettings.Mode.REQUIRED;
    }

    /** The job's device name: {@code rsmap.io/job=NAME}. */
    static String device(JobId id) {
        return CdiSpec.VENDOR + "/" + CdiSpec.JOB_CLASS + "=" + CdiSpec.jobDeviceName(id.job(), id.task());
    }

    /** The file of {@code job}'s spec. */
    Path of(JobId id) {
        return settings.dir().resolve(PREFIX + CdiSpec.jobDeviceName(id.job(), id.task()) + ".json");
    }

    /**
     * The job as JOB_ENTER answers it (docs/containers.md, "The job's variable"): with {@link #VARIABLE} last,
     * where it holds a grant here and this host's maps list devices, whether or not its grant has any now
     * (a realloc may add some; until then the name resolves to nothing, and a container gets no device).
     */
    Job entering(Job job, boolean hostListsDevices) {
        if (!on() || !hostListsDevices) {
            return job;
        }
        Map<String, String> env = new java.util.LinkedHashMap<>(job.env());
        env.remove(VARIABLE);
        env.put(VARIABLE, device(job.id()));
        return job.withEnv(env);
    }

    /** The spec of {@code job} holding {@code held}: its device nodes and its SGE_HGR_* and GPU variables. */
    static CdiSpec spec(Job job, List<Instance> held) {
        List<String> env = new java.util.ArrayList<>();
        job.env().forEach((k, v) -> {
            if (k.startsWith("SGE_HGR_") || GpuSettings.ENV_NAMES.contains(k)) {
                env.add(k + "=" + v);
            }
        });
        JobId id = job.id();
        return new CdiSpec(CdiSpec.VENDOR + "/" + CdiSpec.JOB_CLASS, List.of(new CdiSpec.Device(
                CdiSpec.jobDeviceName(id.job(), id.task()), CdiSpec.nodes(held).found(), env)));
    }

    /**
     * Brings {@code job}'s file in step with what it holds: written where it holds devices, removed where it
     * holds none. Empty when done (or off); else why the file could not be written, also logged.
     */
    Optional<String> held(Job job, List<Instance> held) {
        if (!on()) {
            return Optional.empty();
        }
        if (job == inStep) {
            inStep = null;
            return Optional.empty();
        }
        inStep = null;
        if (!CdiSpec.listsDevices(held)) {
            removed(job.id());
            inStep = job;
            return Optional.empty();
        }
        String text = spec(job, held).text();
        if (text.equals(written.get(job.id()))) {
            inStep = job;
            return Optional.empty();
        }
        faults.reached("write");
        try {
            write(of(job.id()), text);
            written.put(job.id(), text);
            inStep = job;
            return Optional.empty();
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            String why = "cannot write its CDI spec " + of(job.id()) + " (cdi_dir " + settings.dir() + "): " + e;
            log.note(Log.Level.WARNING, "job " + job.id() + ": " + why);
            // Fails closed: the spec it had (of a wider holding, before a RELEASE) goes rather than outliving
            // what it names; a container of the job then finds no device until a later change or reconciliation.
            removed(job.id());
            return Optional.of(why);
        }
    }

    /**
     * {@code job} holds nothing here any more: its file goes. Only a file rsmapd wrote or found is looked
     * for: start-up ({@link #sync}) read cdi_dir, and every file since was written here, so a job not in
     * {@link #written} has none (a file put there by hand goes at the next reconciliation).
     */
    void removed(JobId job) {
        if (!on()) {
            return;
        }
        inStep = null;
        if (written.remove(job) != null) {
            faults.reached("remove");
            delete(of(job), "job " + job);
        }
    }

    /**
     * Start-up and reconciliation: every held job's file written as it holds now, every other file of
     * rsmapd's in cdi_dir removed (a job that ended while rsmapd was away or killed). A cdi_dir that cannot
     * be read is logged and left alone.
     */
    void sync(java.util.Collection<Job> jobs, java.util.function.Function<Job, List<Instance>> holding) {
        if (on()) {
            step(jobs, holding);
        } else if (this != NONE && !offSwept) { // a host's first look: never an authority's, which has no cdi_dir
            // cdi = off: the specs an earlier run with it on left go, since no grant is kept in step with them
            offSwept = true;
            step(List.of(), holding);
        }
    }

    /** {@link #sync} of {@code jobs}' specs: theirs written, every other file of rsmapd's in cdi_dir removed. */
    private void step(java.util.Collection<Job> jobs, java.util.function.Function<Job, List<Instance>> holding) {
        inStep = null;
        Map<JobId, List<Instance>> heldByJob = new java.util.LinkedHashMap<>();
        Map<JobId, Job> byId = new HashMap<>();
        jobs.forEach(j -> {
            heldByJob.put(j.id(), holding.apply(j));
            byId.put(j.id(), j);
        });
        Map<String, JobId> files = new HashMap<>(); // file name -> job
        heldByJob.keySet().forEach(j -> files.put(of(j).getFileName().toString(), j));
        if (Files.isDirectory(settings.dir())) {
            java.util.Set<JobId> present = new java.util.HashSet<>();
            try (DirectoryStream<Path> dir = Files.newDirectoryStream(settings.dir(), "{,.}" + PREFIX + "*")) {
                for (Path p : dir) {
                    JobId owner = files.get(p.getFileName().toString());
                    if (owner == null || !CdiSpec.listsDevices(heldByJob.get(owner))
                            || !Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) { // a link or a FIFO is never read
                        delete(p, owner == null ? "a job that holds nothing here" : "job " + owner); // or a kill's temporary file
                    } else {
                        present.add(owner);
                        // what is on disk, edited by hand too: the same is not written again, anything else is
                        written.put(owner, Files.readString(p, StandardCharsets.UTF_8));
                    }
                }
                written.keySet().retainAll(present); // a file removed by hand is written again
            } catch (IOException | java.io.UncheckedIOException e) {
                log.note(Log.Level.WARNING, "cannot read cdi_dir " + settings.dir() + ": " + e);
            }
        } else {
            written.clear();
        }
        written.keySet().retainAll(heldByJob.keySet());
        heldByJob.forEach((j, held) -> {
            if (CdiSpec.listsDevices(held)) {
                String text = spec(byId.get(j), held).text();
                if (!text.equals(written.get(j))) {
                    try {
                        write(of(j), text);
                        written.put(j, text);
                    } catch (IOException | UnsupportedOperationException | SecurityException e) {
                        log.note(Log.Level.WARNING, "job " + j + ": cannot write its CDI spec " + of(j) + ": " + e);
                    }
                }
            }
        });
    }

    /** Removes {@code file}, the spec of {@code whose}, saying so in the log. */
    private void delete(Path file, String whose) {
        try {
            Files.deleteIfExists(file);
            log.note(Log.Level.INFO, "CDI spec " + file + " of " + whose + " removed");
        } catch (IOException e) {
            log.note(Log.Level.WARNING, "cannot remove the CDI spec " + file + " of " + whose + ": " + e);
        }
    }

    /**
     * {@code text} into {@code file}: a new temporary file (never through a link), renamed over. Not forced:
     * the journal is what is durable, and start-up rewrites every spec that differs from it.
     */
    private void write(Path file, String text) throws IOException {
        Path dir = file.getParent();
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException(dir + " is not a directory (a link?): not written through");
            }
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        }
        Path tmp = dir.resolve("." + file.getFileName() + ".tmp");
        Files.deleteIfExists(tmp); // a link is removed, not followed
        try (var out = java.nio.channels.FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")))) {
            out.write(java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
        }
        faults.reached("permissions");
        // whatever the umask; on the file created above, never through a link put in its place since
        Files.getFileAttributeView(tmp, java.nio.file.attribute.PosixFileAttributeView.class,
                LinkOption.NOFOLLOW_LINKS).setPermissions(PosixFilePermissions.fromString("rw-r--r--"));
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
