// On an authority: the group keys each job's scope=job requests are held to on all its hosts, and which
// hosts were told them; rebuilt from the journal's key records, written back by compaction.
package rsmap.daemon.state;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.alloc.GroupKeys;

/**
 * Invariant: a job is here exactly while at least one host holds it (a host was answered its keys and
 * has not ended it); its keys only grow (a map another host asks about first is added), never change.
 * Jobs are named as their hosts name them, {@code JOB[.TASK]}. Guarded by the daemon's lock.
 */
public final class JobGroups {
    /** A job's keys and the hosts that hold them, in the order they asked. */
    public record Held(GroupKeys keys, Set<String> hosts) {
        public Held {
            hosts = java.util.Collections.unmodifiableSet(new LinkedHashSet<>(hosts));
        }
    }

    private final Map<JobId, Held> jobs = new LinkedHashMap<>();

    public Optional<Held> of(JobId job) {
        return Optional.ofNullable(jobs.get(job));
    }

    /** Records {@code held} for {@code job}; a job held by no host is forgotten. */
    public void put(JobId job, Held held) {
        if (held.hosts().isEmpty()) {
            jobs.remove(job);
        } else {
            jobs.put(job, held);
        }
    }

    /** A key record read back from the journal: {@code job}'s {@code keys}, held by {@code hosts}. */
    public void replay(JobId job, GroupKeys keys, List<String> hosts) {
        put(job, new Held(keys, new LinkedHashSet<>(hosts)));
    }

    /** The jobs {@code host} holds keys of. */
    public List<JobId> heldBy(String host) {
        List<JobId> out = new ArrayList<>();
        jobs.forEach((job, h) -> {
            if (h.hosts().contains(host)) {
                out.add(job);
            }
        });
        return out;
    }

    public int size() {
        return jobs.size();
    }


    public Map<JobId, Held> all() {
        return java.util.Collections.unmodifiableMap(jobs);
    }
}
