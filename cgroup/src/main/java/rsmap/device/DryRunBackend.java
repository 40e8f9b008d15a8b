// The dry-run backend: enforces nothing, only records what it would do, for admins trying rsmapd.
package rsmap.device;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Records and reports policies without enforcing them. */
public final class DryRunBackend implements DeviceBackend {
    private final Map<String, DevicePolicy> applied = new ConcurrentHashMap<>();
    private final List<String> log = Collections.synchronizedList(new ArrayList<>());

    @Override
    public String name() {
        return "dry-run";
    }

    @Override
    public Availability availability() {
        return Availability.yes();
    }

    @Override
    public void apply(String job, DevicePolicy policy, long... pids) {
        applied.put(job, policy);
        log.add("job=" + job + " would apply " + (policy.isOpen() ? "no restriction" : String.join("; ",
                policy.cgroupV1Lines())) + (policy.missing().isEmpty() ? "" : " missing=" + policy.missing()));
    }

    @Override
    public void remove(String job) {
        if (applied.remove(job) != null) {
            log.add("job=" + job + " would remove its policy");
        }
    }

    /** What would have been done, in order. */
    public List<String> log() {
        synchronized (log) {
            return List.copyOf(log);
        }
    }

    public Map<String, DevicePolicy> applied() {
        return Map.copyOf(applied);
    }
}
