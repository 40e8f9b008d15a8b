// Enforcing a job's device policy with the configured backend, and what happens when that fails.
package rsmap.device;

import java.util.Objects;
import java.util.Optional;

/**
 * A backend plus the admin's choice of what a failure means: with {@link Mode#REQUIRED}
 * (the default) a policy that cannot be applied is an error, and the starter must refuse to exec the
 * job, since it would otherwise reach devices it was not granted; with {@link Mode#OPTIONAL} the job
 * runs anyway and the caller gets a warning saying exactly what is unenforced.
 */
public final class Isolation {
    /**
     * What a failure to enforce means; {@code OFF}: the admin runs jobs without any device policy (the only
     * way, besides maps that list no devices, that a job runs unrestricted).
     */
    public enum Mode { REQUIRED, OPTIONAL, OFF }

    private final DeviceBackend backend;
    private final Mode mode;

    public Isolation(DeviceBackend backend, Mode mode) {
        this.backend = Objects.requireNonNull(backend);
        this.mode = Objects.requireNonNull(mode);
    }

    public DeviceBackend backend() {
        return backend;
    }

    public Mode mode() {
        return mode;
    }

    /**
     * Applies {@code policy} to the job's processes. Returns a warning when isolation is optional and
     * could not be enforced; throws when it is required.
     */
    public Optional<String> apply(String job, DevicePolicy policy, long... pids) throws DevicePolicyException {
        if (mode == Mode.OFF) {
            return Optional.empty();
        }
        try {
            backend.apply(job, policy, pids);
            return policy.missing().isEmpty() ? Optional.empty()
                    : Optional.of("job " + job + ": device paths missing on this host were left out: " + policy.missing());
        } catch (DevicePolicyException e) {
            if (mode == Mode.REQUIRED) {
                throw e;
            }
            return Optional.of("job " + job + ": device isolation is NOT enforced (isolation=optional): the job can reach "
                    + "every device of the host, not only " + policy.rules().size() + " granted; " + e.getMessage());
        }
    }

    /**
     * Replaces the policy of a job that has one ({@link DeviceBackend#update}), with the modes of
     * {@link #apply}: required throws, optional returns a warning saying what is unenforced, off does nothing.
     */
    public Optional<String> update(String job, DevicePolicy policy) throws DevicePolicyException {
        if (mode == Mode.OFF) {
            return Optional.empty();
        }
        try {
            backend.update(job, policy);
            return policy.missing().isEmpty() ? Optional.empty()
                    : Optional.of("job " + job + ": device paths missing on this host were left out: " + policy.missing());
        } catch (DevicePolicyException e) {
            if (mode == Mode.REQUIRED) {
                throw e;
            }
            return Optional.of("job " + job + ": device policy NOT updated (isolation=optional): the job may reach "
                    + "devices no longer granted, or miss some of the " + policy.rules().size() + " granted now; "
                    + e.getMessage());
        }
    }

    /**
     * The processes in the job's cgroup ({@link DeviceBackend#processes}); empty when isolation is off or the
     * backend cannot list them.
     */
    public Optional<java.util.List<Long>> processes(String job) throws DevicePolicyException {
        return mode == Mode.OFF ? Optional.empty() : backend.processes(job);
    }

    /** {@link DeviceBackend#setAside}; false when isolation is off. */
    public boolean setAside(String job, String as) throws DevicePolicyException {
        return mode != Mode.OFF && backend.setAside(job, as);
    }

    /** {@link DeviceBackend#setAsideNames}; none when isolation is off. */
    public java.util.List<String> setAsideNames() throws DevicePolicyException {
        return mode == Mode.OFF ? java.util.List.of() : backend.setAsideNames();
    }

    /** Removes the job's policy; failures are reported, whatever the mode (a cgroup left behind matters). */
    public void remove(String job) throws DevicePolicyException {
        if (mode == Mode.OFF) {
            return;
        }
        backend.remove(job);
    }
}
