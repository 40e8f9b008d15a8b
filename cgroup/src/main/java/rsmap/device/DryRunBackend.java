// The dry-run backend: enforces nothing, only records what it would do, for admins trying rsmapd.
package rsmap.device;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records and reports policies without enforcing them. Updates follow the rules of the real backends
 * ({@link DeviceBackend#update}), so an admin trying rsmapd sees the refusals they would get.
 */
public final class DryRunBackend implements DeviceBackend {
    private final Map<String, DevicePolicy> applied = new ConcurrentHashMap<>();
    /** The jobs ever applied a closed policy until removed: a real backend holds their processes. */
    private final Set<String> held = ConcurrentHashMap.newKeySet();
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
        if (!policy.isOpen()) {
            held.add(job);
        }
        log.add("job=" + job + " would apply " + describe(policy));
    }

    @Override
    public void update(String job, DevicePolicy policy) throws DevicePolicyException {
        if (!applied.containsKey(job)) {
            throw DevicePolicyException.noPolicy(job);
        }
        if (!policy.isOpen() && !held.contains(job)) {
            throw DevicePolicyException.openCannotClose(job);
        }
        applied.put(job, policy);
        log.add("job=" + job + " would update to " + describe(policy));
    }

    @Override
    public void remove(String job) {
        held.remove(job);
        if (applied.remove(job) != null) {
            log.add("job=" + job + " would remove its policy");
        }
    }

    private static String describe(DevicePolicy policy) {
        return (policy.isOpen() ? "no restriction" : String.join("; ", policy.cgroupV1Lines()))
                + (policy.missing().isEmpty() ? "" : " missing=" + policy.missing());
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
