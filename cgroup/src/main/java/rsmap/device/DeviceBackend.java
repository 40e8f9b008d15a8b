// What a device policy backend does: name itself, say whether it can run here, apply, update, remove; and
// where it can, list a job's processes and set its policy aside.
package rsmap.device;

/**
 * Enforces device policies for jobs. Every {@link #apply} has a {@link #remove}; remove is idempotent
 * and leaves nothing behind. An open policy restricts nothing, so applying it only records the job.
 * {@link #update} changes the policy of a running job (dynamic reallocation).
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

    /**
     * Replaces the policy of {@code job}, which must have one applied, by {@code policy} exactly:
     * devices it adds become reachable, devices it no longer lists are denied, for the processes already
     * under the job's policy and those they start later. It never creates a policy: a job with none applied
     * (never applied, removed, or forgotten by the backend) is an error. A device in both the old and the
     * new policy stays reachable throughout where the backend can manage that; a backend never widens beyond
     * both policies on the way.
     *
     * <p>Closed to open lifts every restriction but keeps the job's processes where the backend can reach
     * them, so a later update can close the policy again. Open to closed is refused when the open policy
     * was applied with nothing to hold the job's processes (an open {@link #apply} records the job only):
     * they, and whatever they started since, can no longer all be found, and confining only some of them
     * would report a policy that the rest of the job escapes.
     *
     * @throws DevicePolicyException when the job has no policy applied, or the new one cannot be enforced;
     *                               the job may then reach a mix of the two policies (never a device that
     *                               neither allows), and the caller must not report the change as done
     */
    void update(String job, DevicePolicy policy) throws DevicePolicyException;

    /**
     * The processes in the job's cgroup now (every one, whichever process tree it left), or empty when this
     * backend cannot list them. A job without a policy, or with an open one that holds no process, has none.
     */
    default java.util.Optional<java.util.List<Long>> processes(String job) throws DevicePolicyException {
        return java.util.Optional.empty();
    }

    /**
     * Moves the job's policy, with the processes under it, to the name {@code as}, so that a later policy of
     * {@code job} starts afresh and never holds them; false when this backend cannot (the policy stays under
     * {@code job}). The policy under {@code as} is then listed, updated and removed by that name.
     */
    default boolean setAside(String job, String as) throws DevicePolicyException {
        return false;
    }

    /**
     * The names of the policies set aside ({@link #setAside}) that this backend still holds, by an earlier
     * run of rsmapd too: {@code <job>.ended-<n>}, in no particular order; none where it cannot set aside.
     */
    default java.util.List<String> setAsideNames() throws DevicePolicyException {
        return java.util.List.of();
    }

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
