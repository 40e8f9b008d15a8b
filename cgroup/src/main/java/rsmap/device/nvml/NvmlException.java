// A failed NVML call: which call, its return code by nvml.h's name, and nvmlErrorString's text.
package rsmap.device.nvml;

/**
 * One line, e.g. {@code nvmlInit_v2: Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED)}. A library that
 * cannot be loaded at all is {@code NVML_ERROR_LIBRARY_NOT_FOUND} of the call {@code dlopen NAME}.
 */
public final class NvmlException extends Exception {
    private static final long serialVersionUID = 1L;
    private final String call;
    private final int code;

    NvmlException(String call, int code, String text) {
        super(call + ": " + text + " (" + Nvml.codeName(code) + ")");
        this.call = call;
        this.code = code;
    }

    /** The NVML function that failed (with the card's index where it is a card's call). */
    public String call() {
        return call;
    }

    /** The nvmlReturn_t. */
    public int code() {
        return code;
    }

    /** Whether the card fell off the bus (NVML_ERROR_GPU_IS_LOST). */
    public boolean lost() {
        return code == Nvml.GPU_IS_LOST;
    }
}
