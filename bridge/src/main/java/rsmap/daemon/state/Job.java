// A job holding instances on this host: who owns it, what it asked for, what it got, where it runs.
package rsmap.daemon.state;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.alloc.Grant;

/**
 * A job as the daemon keeps it: its grant and the SGE_HGR_* it renders, what a realloc took away that it
 * has not released yet ({@code releasing}: still in its device policy, not in its SGE_HGR_*, not
 * grantable to anyone), and the processes its starter entered (pid to start time, so that a
 * reused pid is not taken for the job's). A job that holds nothing here but entered has an empty grant
 * and request (the starter enters every job). {@code remote}: the instances of the cluster's global
 * maps the authority granted the job (under host {@value rsmap.alloc.Cluster#GLOBAL}), never in
 * this host's core.
 */
public record Job(JobId id, String user, String request, int slots, Grant grant, Grant releasing, Grant remote,
           Map<String, String> env, Map<Long, Instant> pids) {
    /** Unknown start time of an entered process (pid reuse then cannot be told apart). */
    static final Instant UNKNOWN = Instant.EPOCH;

    public Job {
        pids = Collections.unmodifiableMap(new LinkedHashMap<>(pids));
    }

    /** A job that holds nothing here, entered by a process of {@code user}. */
    public static Job bare(JobId id, String user) {
        return new Job(id, user, "", 1, Grant.NONE, Grant.NONE, Grant.NONE, Map.of(), Map.of());
    }

    /** One more process entered the job (a job may run several steps, each entering); exited ones drop out. */
    public Job withPid(long p, Instant start) {
        Map<Long, Instant> next = new LinkedHashMap<>();
        pids.forEach((pid, t) -> {
            if (alive(pid, t)) {
                next.put(pid, t);
            }
        });
        next.put(p, start == null ? UNKNOWN : start);
        return new Job(id, user, request, slots, grant, releasing, remote, env, next);
    }

    /** With the global part the authority granted it, and {@code e}, the environment of both parts. */
    public Job withRemote(Grant r, Map<String, String> e) {
        return new Job(id, user, request, slots, grant, releasing, r, e, pids);
    }

    public Job withEnv(Map<String, String> e) {
        return new Job(id, user, request, slots, grant, releasing, remote, e, pids);
    }

    /** What a realloc or a release left the job: {@code held} it may use, {@code taken} it is to give back. */
    public Job holding(Grant held, Grant taken, Map<String, String> e) {
        return new Job(id, user, request, slots, held, taken, remote, e, pids);
    }

    /** The same process as entered: alive, and started when it was then (not a reused pid). */
    public static boolean alive(long pid, Instant start) {
        Optional<ProcessHandle> p = ProcessHandle.of(pid);
        return p.isPresent() && p.get().isAlive() && (start.equals(UNKNOWN)
                || p.get().info().startInstant().map(start::equals).orElse(true));
    }

    public Set<String> maps() {
        Set<String> maps = new LinkedHashSet<>();
        grant.byHost().values().forEach(m -> maps.addAll(m.keySet()));
        releasing.byHost().values().forEach(m -> maps.addAll(m.keySet()));
        remote.byHost().values().forEach(m -> maps.addAll(m.keySet()));
        return maps;
    }
}
