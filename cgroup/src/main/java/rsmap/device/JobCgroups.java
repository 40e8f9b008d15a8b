// Which job's cgroup a process is in, read from /proc/<pid>/cgroup: rsmapd never moves a process out of
// another job's device policy into the one it is asked for.
package rsmap.device;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The job cgroups rsmapd knows: its own v1 devices cgroups {@code .../rsmap/<job>}, its transient scopes
 * {@code rsmap-<job>.scope}, and the scopes of Open Cluster Scheduler's execd
 * {@code ocs<port>.<job>[.<task>].scope}. A process already inside one of these for another job belongs
 * to that job: putting it under this job's policy could widen what it reaches.
 */
public final class JobCgroups {
    private static final Pattern OWN_V1 = Pattern.compile("/rsmap/([^/]+)(?:/.*)?$");
    private static final Pattern OWN_SCOPE = Pattern.compile("/rsmap-([^/]+)\\.scope(?:/.*)?$");
    private static final Pattern EXECD_SCOPE = Pattern.compile("/ocs[0-9]+\\.([0-9]+(?:\\.[0-9]+)?)\\.scope(?:/.*)?$");

    private JobCgroups() {
    }

    /** The job another than {@code job} whose cgroup holds {@code pid}, if any. */
    public static Optional<String> foreignJob(long pid, String job) throws IOException {
        return foreignJob(Files.readString(Path.of("/proc", Long.toString(pid), "cgroup")), job);
    }

    /**
     * The same from the text of a {@code /proc/<pid>/cgroup} file. Job identifiers compare as rsmapd
     * writes them: {@code 7} for a job, {@code 7.3} for its array task 3; execd's scope of a plain job
     * ({@code ocs6444.7.scope}) is job 7.
     */
    public static Optional<String> foreignJob(String procCgroup, String job) {
        for (String line : procCgroup.split("\n")) {
            int second = line.indexOf(':', line.indexOf(':') + 1);
            if (second < 0) {
                continue;
            }
            String path = line.substring(second + 1).strip();
            for (Pattern p : new Pattern[] {OWN_V1, OWN_SCOPE, EXECD_SCOPE}) {
                Matcher m = p.matcher(path);
                if (m.find() && !sameJob(m.group(1), job)) {
                    return Optional.of(m.group(1));
                }
            }
        }
        return Optional.empty();
    }

    /** Job 7 is task 1 of itself, as in execd's spool (active_jobs/7.1). */
    private static boolean sameJob(String found, String job) {
        return withTask(found).equals(withTask(job));
    }

    private static String withTask(String job) {
        return job.contains(".") ? job : job + ".1";
    }
}
