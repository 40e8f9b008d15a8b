// A pe task on a host where its job's prolog did not run (a slave host): the job's request, owner and slots
// read from execd's own spool (docs/integration-ocs.md, "Parallel jobs: what each task gets").
package rsmap.daemon.job;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;

/**
 * What execd leaves for a pe task ({@code qrsh -inherit}), tried on Son of Grid Engine 8.1.9 and Open Cluster
 * Scheduler 9.1.4: a directory {@code active_jobs/<job>.<task>/<pe task id>/} with {@code config} (
 * {@code job_owner}, {@code host_slots}: the job's slots on this host on SGE 8.1; 0 on OCS 9.1.4
 * (tried), where the request is granted once; {@code pe_task_id}) and
 * {@code environment} (the job's environment, then what {@code qrsh -inherit -v} passed, then execd's own).
 * The master host alone has an {@code environment} of the job itself, beside the tasks': there the prolog's
 * JOB_START is the only source of a grant, and nothing is read here.
 * <p>
 * Believed only when root owns every directory from {@code active_jobs} down and both files, none of them a
 * link and none writable by group or others: the job's owner controls the task's process environment, never
 * execd's files. What {@code qrsh -inherit -v} passes does reach the task's spooled environment (the bound
 * docs/integration-ocs.md, "Limits", states); every pe task directory of the job must therefore name the same
 * owner and request (a task started with another {@code RSMAP_REQUEST} is refused, not chosen from).
 */
final class SlaveSpool {
    /** A spool file larger than this is not execd's (an environment is a few KiB). */
    static final long MAX_FILE = 1 << 20;

    /** What a slave host grants from: the job's owner, its request, its slots here; {@code from} for the log. */
    record Start(String user, String request, int slots, Path from) {
    }

    private SlaveSpool() {
    }

    /**
     * The start of job {@code id} as this host's spool {@code spool} describes it; empty where there is
     * nothing to grant (the master host, no pe task of the job here, no {@code RSMAP_REQUEST}).
     *
     * @throws Refusal REFUSED when a file is not believed or the tasks disagree
     */
    static Optional<Start> read(Path spool, JobId id) throws Refusal {
        Path active = spool.resolve("active_jobs");
        Path job = active.resolve(id.spoolDir());
        if (!Files.isDirectory(job, LinkOption.NOFOLLOW_LINKS) || Files.exists(job.resolve("environment"),
                LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty(); // no task of the job here, or the master host (its prolog grants)
        }
        List<Path> tasks = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(job)) {
            for (Path d : dirs) {
                if (Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS) && Files.exists(d.resolve("config"), LinkOption.NOFOLLOW_LINKS)) {
                    tasks.add(d);
                }
            }
        } catch (IOException | java.nio.file.DirectoryIteratorException e) {
            throw refused(id, job + ": cannot be listed: " + e.getMessage());
        }
        tasks.sort(null);
        Start found = null;
        for (Path task : tasks) {
            for (Path p : List.of(active, job, task, task.resolve("config"), task.resolve("environment"))) {
                believed(id, p);
            }
            Map<String, String> config = lines(id, task.resolve("config"), List.of("job_owner", "host_slots", "pe_task_id"));
            if (!config.containsKey("pe_task_id")) {
                continue; // not a pe task's directory
            }
            String request = lines(id, task.resolve("environment"), List.of("RSMAP_REQUEST")).get("RSMAP_REQUEST");
            if (request == null) {
                request = "";
            }
            String user = config.getOrDefault("job_owner", "");
            int slots;
            try {
                slots = Integer.parseInt(config.getOrDefault("host_slots", ""));
            } catch (NumberFormatException e) {
                throw refused(id, task.resolve("config") + ": host_slots is not a number");
            }
            if (user.isEmpty() || slots < 0) {
                throw refused(id, task.resolve("config") + ": no job_owner, or host_slots below 0");
            }
            slots = Math.max(slots, 1); // OCS 9.1.4 writes host_slots=0 for a pe task: the request once
            Start s = new Start(user, request, slots, task.resolve("environment"));
            if (found != null && (!found.user().equals(s.user()) || !found.request().equals(s.request()))) {
                throw refused(id, "its pe tasks here disagree: " + found.from() + " asks '" + found.request() + "' for '"
                        + found.user() + "', " + s.from() + " asks '" + s.request() + "' for '" + s.user() + "'");
            }
            found = found == null ? s : found;
        }
        return found == null || found.request().isEmpty() ? Optional.empty() : Optional.of(found);
    }

    /** Root's, no link, not writable by group or others; else refused with what it is. */
    private static void believed(JobId id, Path p) throws Refusal {
        PosixFileAttributes a;
        try {
            a = Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            throw refused(id, p + " is missing");
        } catch (IOException | UnsupportedOperationException e) {
            throw refused(id, p + ": " + e.getMessage());
        }
        if (a.isSymbolicLink()) {
            throw refused(id, p + " is a link: not execd's spool");
        }
        if (!a.owner().getName().equals("root")) {
            throw refused(id, p + " belongs to '" + a.owner().getName() + "', not root: not execd's spool");
        }
        if (a.permissions().contains(PosixFilePermission.GROUP_WRITE) || a.permissions().contains(PosixFilePermission.OTHERS_WRITE)) {
            throw refused(id, p + " is writable by others than root: not execd's spool");
        }
    }

    /**
     * The values of {@code keys} in a file of NAME=value lines (execd writes bytes that are not UTF-8 in some
     * values, e.g. QRSH_COMMAND's separators: only the wanted lines are decoded); the first of each wins.
     */
    private static Map<String, String> lines(JobId id, Path file, List<String> keys) throws Refusal {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            bytes = in.readNBytes((int) MAX_FILE + 1);
        } catch (IOException e) {
            throw refused(id, file + ": cannot be read: " + e.getMessage());
        }
        if (bytes.length > MAX_FILE) {
            throw refused(id, file + " is larger than " + MAX_FILE + " bytes: not execd's spool");
        }
        Map<String, String> found = new LinkedHashMap<>();
        int start = 0;
        for (int i = 0; i <= bytes.length; i++) {
            if (i == bytes.length || bytes[i] == '\n') {
                String line = new String(bytes, start, i - start, StandardCharsets.ISO_8859_1);
                int eq = line.indexOf('=');
                if (eq > 0 && keys.contains(line.substring(0, eq)) && !found.containsKey(line.substring(0, eq))) {
                    found.put(line.substring(0, eq), new String(bytes, start + eq + 1, i - start - eq - 1, StandardCharsets.UTF_8));
                }
                start = i + 1;
            }
        }
        return found;
    }

    private static Refusal refused(JobId id, String why) {
        return Refusal.refused("job " + id + ": no grant for its pe task on this host: " + why);
    }
}
