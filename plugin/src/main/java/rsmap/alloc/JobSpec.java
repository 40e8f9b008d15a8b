// What a job asks for: its requests, the hosts and slots the scheduler placed it on, and its timing.
package rsmap.alloc;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import rsmap.request.RequestList;

/**
 * A job as submitted. {@code hosts} maps each host to the slots the job has there, in the order the
 * scheduler gave them; the master host is where JOB consumables are taken.
 *
 * @param runtime seconds, Long.MAX_VALUE when unlimited
 * @param ar      the advance reservation the job runs in, if any
 * @param reserve resource reservation (the seed's -R y)
 * @param keys    the groups its scope=job requests are held to, chosen for the whole job elsewhere
 *                ({@link GroupKeys#NONE}: chosen where it is placed)
 */
public record JobSpec(String id, RequestList request, Map<String, Integer> hosts, String master, long runtime,
                      Optional<String> ar, boolean reserve, GroupKeys keys) {
    public static final long UNLIMITED = Long.MAX_VALUE;

    public JobSpec {
        Objects.requireNonNull(id);
        Objects.requireNonNull(request);
        Objects.requireNonNull(master);
        Objects.requireNonNull(ar);
        Objects.requireNonNull(keys);
        hosts = Collections.unmodifiableMap(new LinkedHashMap<>(hosts));
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("a job runs on at least one host");
        }
        if (runtime < 0) {
            throw new IllegalArgumentException("negative runtime");
        }
    }

    /** A job whose groups are chosen where it is placed. */
    public JobSpec(String id, RequestList request, Map<String, Integer> hosts, String master, long runtime,
                   Optional<String> ar, boolean reserve) {
        this(id, request, hosts, master, runtime, ar, reserve, GroupKeys.NONE);
    }

    /** This job, its scope=job requests held to {@code pinned}. */
    public JobSpec withKeys(GroupKeys pinned) {
        return new JobSpec(id, request, hosts, master, runtime, ar, reserve, pinned);
    }

    /** When a job started at {@code time} ends, saturating at unlimited. */
    long endAt(long time) {
        return runtime == UNLIMITED || time > Long.MAX_VALUE - runtime ? UNLIMITED : time + runtime;
    }

    int totalSlots() {
        return hosts.values().stream().mapToInt(Integer::intValue).sum();
    }
}
