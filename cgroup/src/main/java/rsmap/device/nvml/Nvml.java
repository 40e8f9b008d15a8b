// NVML through JNA: the host's NVIDIA driver and cards, read in one discovery (init, queries, shutdown).
package rsmap.device.nvml;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;

/**
 * The library named by rsmapd.conf's {@code nvml_library}: {@value #DEFAULT} found by the dynamic loader
 * (the driver installs it), or a path. Every NVML return code other than NVML_SUCCESS becomes an {@link
 * NvmlException} naming the call and {@code nvmlErrorString}'s text. A card whose calls fail (a lost card
 * answers NVML_ERROR_GPU_IS_LOST) is left out with a line in {@link Inventory#unread()}; a failure of
 * the library itself (init, driver version, count) fails the discovery. NVML is called only here: the
 * allocation core sees maps and characteristics built from an {@link Inventory}, never NVML.
 */
public final class Nvml {
    /** The soname the NVIDIA driver installs (the unversioned name comes with development packages only). */
    public static final String DEFAULT = "libnvidia-ml.so.1";
    /** Where a PCI device's numa_node is, for cards whose NVML answers no NUMA node. */
    public static final Path PCI_DEVICES = Path.of("/sys/bus/pci/devices");

    // nvml.h, nvmlReturn_t (the ones this layer tells apart; the rest are named by codeName).
    static final int SUCCESS = 0;
    static final int NOT_SUPPORTED = 3;
    static final int LIBRARY_NOT_FOUND = 12;
    static final int FUNCTION_NOT_FOUND = 13;
    static final int GPU_IS_LOST = 15;
    // nvml.h buffer sizes: NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE, NVML_DEVICE_UUID_V2_BUFFER_SIZE,
    // NVML_DEVICE_NAME_V2_BUFFER_SIZE.
    private static final int DRIVER_BUFFER = 80;
    private static final int UUID_BUFFER = 96;
    private static final int NAME_BUFFER = 96;

    private static final String[] NAMES = {"SUCCESS", "UNINITIALIZED", "INVALID_ARGUMENT", "NOT_SUPPORTED",
        "NO_PERMISSION", "ALREADY_INITIALIZED", "NOT_FOUND", "INSUFFICIENT_SIZE", "INSUFFICIENT_POWER",
        "DRIVER_NOT_LOADED", "TIMEOUT", "IRQ_ISSUE", "LIBRARY_NOT_FOUND", "FUNCTION_NOT_FOUND", "CORRUPTED_INFOROM",
        "GPU_IS_LOST", "RESET_REQUIRED", "OPERATING_SYSTEM", "LIB_RM_VERSION_MISMATCH", "IN_USE", "MEMORY", "NO_DATA",
        "VGPU_ECC_NOT_SUPPORTED", "INSUFFICIENT_RESOURCES", "FREQ_NOT_SUPPORTED", "ARGUMENT_VERSION_MISMATCH",
        "DEPRECATED", "NOT_READY", "GPU_NOT_FOUND", "INVALID_STATE", "RESET_TYPE_NOT_SUPPORTED"};

    private final String name;
    private final NvmlLibrary lib;
    private final Path pciDevices;

    private Nvml(String name, NvmlLibrary lib, Path pciDevices) {
        this.name = name;
        this.lib = lib;
        this.pciDevices = pciDevices;
    }

    /**
     * Loads {@code library} (a soname the loader finds, or a path); {@code pciDevices} is where the
     * fallback for a card's NUMA node looks ({@link #PCI_DEVICES} on a host).
     *
     * @throws NvmlException NVML_ERROR_LIBRARY_NOT_FOUND of {@code dlopen LIBRARY}, with the loader's reason
     */
    public static Nvml load(String library, Path pciDevices) throws NvmlException {
        try {
            return new Nvml(library, Native.load(library, NvmlLibrary.class), pciDevices);
        } catch (UnsatisfiedLinkError e) {
            String why = e.getMessage() == null ? "" : e.getMessage().lines().findFirst().orElse("").strip()
                    .replaceAll(":$", "");
            throw new NvmlException("dlopen " + library, LIBRARY_NOT_FOUND, "cannot be loaded"
                    + (why.isEmpty() ? "" : ": " + (why.length() > 200 ? why.substring(0, 200) + "..." : why)));
        }
    }

    /** The library's name as configured. */
    public String name() {
        return name;
    }

    /** nvml.h's name of a return code, e.g. NVML_ERROR_GPU_IS_LOST. */
    static String codeName(int code) {
        if (code == SUCCESS) {
            return "NVML_SUCCESS";
        }
        if (code == 999) {
            return "NVML_ERROR_UNKNOWN";
        }
        return code > 0 && code < NAMES.length ? "NVML_ERROR_" + NAMES[code] : "nvmlReturn_t " + code;
    }

    /** One discovery: nvmlInit_v2, the driver and every card, nvmlShutdown (also on failure). */
    public Inventory discover() throws NvmlException {
        check("nvmlInit_v2", lib.nvmlInit_v2());
        try {
            byte[] driver = new byte[DRIVER_BUFFER];
            check("nvmlSystemGetDriverVersion", lib.nvmlSystemGetDriverVersion(driver, driver.length));
            IntByReference cuda = new IntByReference();
            check("nvmlSystemGetCudaDriverVersion_v2", lib.nvmlSystemGetCudaDriverVersion_v2(cuda));
            IntByReference count = new IntByReference();
            check("nvmlDeviceGetCount_v2", lib.nvmlDeviceGetCount_v2(count));
            List<Gpu> gpus = new ArrayList<>();
            List<String> unread = new ArrayList<>();
            for (int i = 0; i < count.getValue(); i++) {
                try {
                    gpus.add(card(i));
                } catch (NvmlException e) {
                    unread.add("gpu " + i + ": " + e.getMessage());
                }
            }
            // NVML_CUDA_DRIVER_VERSION_MAJOR(v) is v / 1000, the minor (v % 1000) / 10.
            int v = cuda.getValue();
            return new Inventory(text(driver), v / 1000 + "." + v % 1000 / 10, gpus, unread);
        } finally {
            lib.nvmlShutdown(); // a failed shutdown leaves nothing to undo: the reference count is the library's
        }
    }

    private Gpu card(int index) throws NvmlException {
        String at = " (gpu " + index + ")";
        PointerByReference handle = new PointerByReference();
        check("nvmlDeviceGetHandleByIndex_v2" + at, lib.nvmlDeviceGetHandleByIndex_v2(index, handle));
        Pointer d = handle.getValue();
        byte[] uuid = new byte[UUID_BUFFER];
        check("nvmlDeviceGetUUID" + at, lib.nvmlDeviceGetUUID(d, uuid, uuid.length));
        byte[] model = new byte[NAME_BUFFER];
        check("nvmlDeviceGetName" + at, lib.nvmlDeviceGetName(d, model, model.length));
        IntByReference minor = new IntByReference();
        check("nvmlDeviceGetMinorNumber" + at, lib.nvmlDeviceGetMinorNumber(d, minor));
        NvmlLibrary.Memory memory = new NvmlLibrary.Memory();
        check("nvmlDeviceGetMemoryInfo" + at, lib.nvmlDeviceGetMemoryInfo(d, memory));
        NvmlLibrary.PciInfo pci = new NvmlLibrary.PciInfo();
        check("nvmlDeviceGetPciInfo_v3" + at, lib.nvmlDeviceGetPciInfo_v3(d, pci));
        IntByReference major = new IntByReference();
        IntByReference ccMinor = new IntByReference();
        check("nvmlDeviceGetCudaComputeCapability" + at, lib.nvmlDeviceGetCudaComputeCapability(d, major, ccMinor));
        String busId = text(pci.busId);
        return new Gpu(index, text(uuid), text(model), minor.getValue(), memory.total, busId, numaNode(d, busId, at),
                major.getValue() + "." + ccMinor.getValue());
    }

    /**
     * nvmlDeviceGetNumaNodeId answers where GPUs are NUMA nodes (Grace Hopper); a PCIe card's node is its
     * PCI device's numa_node in sysfs (what Slurm's and NVIDIA's own tools read). A driver without the
     * function, NOT_SUPPORTED, or -1 in sysfs: no node.
     */
    private OptionalInt numaNode(Pointer d, String busId, String at) throws NvmlException {
        IntByReference node = new IntByReference();
        int r;
        try {
            r = lib.nvmlDeviceGetNumaNodeId(d, node);
        } catch (UnsatisfiedLinkError e) {
            r = FUNCTION_NOT_FOUND;
        }
        if (r == SUCCESS) {
            return OptionalInt.of(node.getValue());
        }
        if (r != NOT_SUPPORTED && r != FUNCTION_NOT_FOUND) {
            check("nvmlDeviceGetNumaNodeId" + at, r);
        }
        Path file = pciDevices.resolve(sysfsName(busId)).resolve("numa_node");
        try {
            String text = Files.readString(file, StandardCharsets.US_ASCII).strip();
            int n = Integer.parseInt(text);
            return n >= 0 ? OptionalInt.of(n) : OptionalInt.empty();
        } catch (IOException | NumberFormatException e) {
            return OptionalInt.empty();
        }
    }

    /** NVML's 00000000:3B:00.0 as sysfs names the device, 0000:3b:00.0. */
    static String sysfsName(String busId) {
        int colon = busId.indexOf(':');
        String domain = colon < 0 ? "" : busId.substring(0, colon);
        String rest = colon < 0 ? busId : busId.substring(colon);
        if (domain.length() > 4) {
            domain = domain.substring(domain.length() - 4);
        }
        return (domain + rest).toLowerCase(Locale.ROOT);
    }

    private void check(String call, int r) throws NvmlException {
        check(lib, call, r);
    }

    /** NVML's return code {@code r} of {@code call}: nothing on success, else the typed error with nvmlErrorString's text. */
    static void check(NvmlLibrary lib, String call, int r) throws NvmlException {
        if (r != SUCCESS) {
            String text;
            try {
                text = lib.nvmlErrorString(r);
            } catch (RuntimeException | UnsatisfiedLinkError e) {
                text = null;
            }
            throw new NvmlException(call, r, text == null || text.isBlank() ? "error " + r : text);
        }
    }

    /** A NUL-terminated buffer's text. */
    static String text(byte[] buffer) {
        int n = 0;
        while (n < buffer.length && buffer[n] != 0) {
            n++;
        }
        return new String(buffer, 0, n, StandardCharsets.UTF_8);
    }
}
