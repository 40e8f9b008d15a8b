// A device policy could not be applied, updated or removed; the message says what and why.
package rsmap.device;

/** Raised by backends; the job must not run with devices it was not granted. */
public final class DevicePolicyException extends Exception {
    private static final long serialVersionUID = 1L;

    public DevicePolicyException(String message, Throwable cause) {
        super(message, cause);
    }

    public DevicePolicyException(String message) {
        super(message);
    }

    /** {@link DeviceBackend#update} of a job the backend holds no policy for: it never creates one. */
    public static DevicePolicyException noPolicy(String job) {
        return new DevicePolicyException("job " + job + " has no device policy applied: an update replaces a"
                + " policy, it never creates one");
    }

    /**
     * {@link DeviceBackend#update} from an open policy applied with nothing holding the job's processes to a
     * closed one: they and what they started since cannot all be found, so part of the job would escape it.
     */
    public static DevicePolicyException openCannotClose(String job) {
        return new DevicePolicyException("job " + job + " runs under an open device policy, its processes in no"
                + " cgroup or unit of rsmapd: a closed policy cannot reach them all now");
    }
}
