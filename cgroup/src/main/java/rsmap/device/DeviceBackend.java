// The four things a device policy backend does: name itself, say whether it can run here, apply, remove.
package rsmap.device;

/**
 * Enforces device policies for jobs. Every {@link #apply} has a {@link #remove}; remove is idempotent
 * and leaves nothing behind. An open policy restricts nothing, so applying it only records the job.
 */
public interface DeviceBackend {
    /** The backend's configuration name: systemd, cgroup-v1, dry-run. */
    String name();

    /** Whether this host can use the backend, with the reason when not. */
    Availability availability();

    /**
     * Puts the processes {@code pids} of {@code job} under {@code policy}.
     *
     * @throws DevicePolicyException when the policy cannot be enforced; the job must then not run
     *                               with devices it was not granted
     */
    void apply(String job, DevicePolicy policy, long... pids) throws DevicePolicyException;

    /** Drops the policy of {@code job}; a job without one is fine. */
    void remove(String job) throws DevicePolicyException;

    /** Whether a backend can run here, and why not. */
    record Availability(boolean available, String reason) {
        public static Availability yes() {
            return new Availability(true, "");
        }

        public static Availability no(String reason) {
            return new Availability(false, reason);
        }
    }
}
