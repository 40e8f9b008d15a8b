// A device policy could not be applied or removed; the message says what and why.
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
}
