// NVML's events of sick cards (critical Xid, double-bit ECC, GPU unavailable) through one event set, and
// the health recheck of a card: the calls NVIDIA's own tools decide a card's health by.
package rsmap.device.nvml;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Open: nvmlInit_v2, one nvmlEventSetCreate, and every card registered (nvmlDeviceRegisterEvents) for the
 * wanted types it supports (nvmlDeviceGetSupportedEventTypes: asking for one it does not support registers
 * none). NVML stays initialised until {@link #close}. {@link #next} waits at most its timeout
 * (nvmlEventSetWait_v2). {@link #sickness} is the recheck (docs/gpus.md, "Health"): the card is found by
 * its UUID (a lost card is not), no row remapping is pending or has failed (nvmlDeviceGetRemappedRows, as
 * DCGM's memory health watch reads it), and no uncorrected ECC error was counted since the driver loaded
 * (nvmlDeviceGetTotalEccErrors, volatile: a reset clears it). A call a card does not support says nothing.
 * Thread-safe as NVML is: one thread waits, another rechecks.
 */
public final class NvmlEvents implements AutoCloseable {
    // nvml.h, nvmlEventType.
    static final long DOUBLE_BIT_ECC = 0x2L;
    static final long XID_CRITICAL = 0x8L;
    static final long GPU_UNAVAILABLE = 0x4000L;
    static final long WANTED = DOUBLE_BIT_ECC | XID_CRITICAL | GPU_UNAVAILABLE;
    // nvml.h: NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC.
    private static final int UNCORRECTED = 1;
    private static final int VOLATILE = 0;
    private static final int TIMEOUT = 10;
    private static final int UUID_BUFFER = 96;

    /** What happened to a card: an Xid (with its number), a double-bit ECC error, or the card is gone. */
    public enum Kind { XID, DOUBLE_BIT_ECC, GPU_LOST }

    /**
     * One event. {@code uuid} is empty for a GPU_LOST that NVML said of no card in particular
     * (nvmlEventSetWait_v2 answering NVML_ERROR_GPU_IS_LOST): then every card is to be rechecked.
     */
    public record Event(String uuid, Kind kind, long xid) {
        /** The event as a taint's reason: "Xid 79", "double-bit ECC error", "GPU lost". */
        public String reason() {
            return switch (kind) {
                case XID -> "Xid " + xid;
                case DOUBLE_BIT_ECC -> "double-bit ECC error";
                case GPU_LOST -> "GPU lost";
            };
        }
    }

    private final NvmlLibrary lib;
    private final Pointer set;
    /** The registered cards: handle to UUID. */
    private final Map<Pointer, String> cards;
    private final List<String> unregistered;
    /** Every card NVML named at open, registered for events or not, by UUID in index order. */
    private final List<String> found;
    private volatile boolean closed;

    private NvmlEvents(NvmlLibrary lib, Pointer set, Map<Pointer, String> cards, List<String> unregistered,
            List<String> found) {
        this.lib = lib;
        this.set = set;
        this.cards = cards;
        this.unregistered = List.copyOf(unregistered);
        this.found = List.copyOf(found);
    }

    /** Opens the event set on every card of {@code library}; a card that cannot be registered is a line of {@link #unregistered}. */
    public static NvmlEvents open(String library) throws NvmlException {
        NvmlLibrary lib;
        try {
            lib = Native.load(library, NvmlLibrary.class);
        } catch (UnsatisfiedLinkError e) {
            throw new NvmlException("dlopen " + library, Nvml.LIBRARY_NOT_FOUND, "cannot be loaded");
        }
        check(lib, "nvmlInit_v2", lib.nvmlInit_v2());
        try {
            PointerByReference ref = new PointerByReference();
            // Without a set the session still serves the recheck (sickness): every card is found, none registered.
            String noSet = null;
            try {
                check(lib, "nvmlEventSetCreate", lib.nvmlEventSetCreate(ref));
            } catch (NvmlException e) {
                noSet = e.getMessage();
            }
            Pointer set = noSet == null ? ref.getValue() : null;
            IntByReference count = new IntByReference();
            check(lib, "nvmlDeviceGetCount_v2", lib.nvmlDeviceGetCount_v2(count));
            Map<Pointer, String> cards = new LinkedHashMap<>();
            List<String> unregistered = new ArrayList<>();
            List<String> found = new ArrayList<>();
            for (int i = 0; i < count.getValue(); i++) {
                String at = " (gpu " + i + ")";
                try {
                    PointerByReference h = new PointerByReference();
                    check(lib, "nvmlDeviceGetHandleByIndex_v2" + at, lib.nvmlDeviceGetHandleByIndex_v2(i, h));
                    byte[] uuid = new byte[UUID_BUFFER];
                    check(lib, "nvmlDeviceGetUUID" + at, lib.nvmlDeviceGetUUID(h.getValue(), uuid, uuid.length));
                    found.add(text(uuid));
                    if (set == null) {
                        continue;
                    }
                    LongByReference supported = new LongByReference();
                    check(lib, "nvmlDeviceGetSupportedEventTypes" + at,
                            lib.nvmlDeviceGetSupportedEventTypes(h.getValue(), supported));
                    long types = WANTED & supported.getValue();
                    if (types == 0) {
                        unregistered.add("gpu " + i + ": supports none of the events of a sick card");
                        continue;
                    }
                    check(lib, "nvmlDeviceRegisterEvents" + at, lib.nvmlDeviceRegisterEvents(h.getValue(), types, set));
                    cards.put(h.getValue(), text(uuid));
                } catch (NvmlException e) {
                    unregistered.add(e.getMessage());
                }
            }
            if (set == null) {
                unregistered.add(0, noSet + ": no card is watched for events");
            }
            return new NvmlEvents(lib, set, cards, unregistered, found);
        } catch (NvmlException e) {
            lib.nvmlShutdown();
            throw e;
        }
    }

    /**
     * Every card NVML named at open (its UUID), whether or not it could be registered for events: what a
     * recheck asks ({@link #sickness}), since a card that tells no event can still be sick.
     */
    public List<String> cards() {
        return found;
    }

    /** Whether NVML gave an event set to wait on (without one, only {@link #sickness} is asked). */
    public boolean watching() {
        return set != null;
    }

    /** The UUIDs of the registered cards. */
    public List<String> registered() {
        return List.copyOf(cards.values());
    }

    /** One line per card left out, and why. */
    public List<String> unregistered() {
        return unregistered;
    }

    /** The next event within {@code timeoutMs}, or none (NVML_ERROR_TIMEOUT). */
    public Optional<Event> next(int timeoutMs) throws NvmlException {
        if (closed || set == null) {
            return Optional.empty();
        }
        NvmlLibrary.EventData data = new NvmlLibrary.EventData();
        int r;
        try {
            r = lib.nvmlEventSetWait_v2(set, data, timeoutMs);
        } catch (UnsatisfiedLinkError e) {
            r = lib.nvmlEventSetWait(set, data, timeoutMs);
        }
        if (r == TIMEOUT) {
            return Optional.empty();
        }
        if (r == Nvml.GPU_IS_LOST) {
            return Optional.of(new Event("", Kind.GPU_LOST, 0));
        }
        check(lib, "nvmlEventSetWait_v2", r);
        String uuid = cards.getOrDefault(data.device, "");
        if ((data.eventType & XID_CRITICAL) != 0) {
            return Optional.of(new Event(uuid, Kind.XID, data.eventData));
        }
        if ((data.eventType & DOUBLE_BIT_ECC) != 0) {
            return Optional.of(new Event(uuid, Kind.DOUBLE_BIT_ECC, 0));
        }
        return Optional.of(new Event(uuid, Kind.GPU_LOST, 0));
    }

    /** Why the card {@code uuid} is not healthy now, or empty when NVML reports it healthy. */
    public Optional<String> sickness(String uuid) {
        PointerByReference h = new PointerByReference();
        int r = lib.nvmlDeviceGetHandleByUUID(uuid, h);
        if (r != Nvml.SUCCESS) {
            return Optional.of(r == Nvml.GPU_IS_LOST ? "GPU lost" : "not found by NVML (" + Nvml.codeName(r) + ")");
        }
        IntByReference corr = new IntByReference();
        IntByReference unc = new IntByReference();
        IntByReference pending = new IntByReference();
        IntByReference failure = new IntByReference();
        Pointer d = h.getValue();
        r = supported(() -> lib.nvmlDeviceGetRemappedRows(d, corr, unc, pending, failure));
        if (r == Nvml.SUCCESS && failure.getValue() != 0) {
            return Optional.of("row remapping failed");
        }
        if (r == Nvml.SUCCESS && pending.getValue() != 0) {
            return Optional.of("row remapping pending (a reset is needed)");
        }
        LongByReference ecc = new LongByReference();
        r = supported(() -> lib.nvmlDeviceGetTotalEccErrors(d, UNCORRECTED, VOLATILE, ecc));
        if (r == Nvml.SUCCESS && ecc.getValue() != 0) {
            return Optional.of(Long.toUnsignedString(ecc.getValue()) + " uncorrected ECC error(s) since the driver loaded");
        }
        if (r != Nvml.SUCCESS && r != Nvml.NOT_SUPPORTED) {
            return Optional.of("nvmlDeviceGetTotalEccErrors: " + Nvml.codeName(r));
        }
        return Optional.empty();
    }

    /** A driver without the function answers as one that does not support it. */
    private static int supported(java.util.function.IntSupplier call) {
        int r;
        try {
            r = call.getAsInt();
        } catch (UnsatisfiedLinkError e) {
            r = Nvml.FUNCTION_NOT_FOUND;
        }
        return r == Nvml.FUNCTION_NOT_FOUND ? Nvml.NOT_SUPPORTED : r;
    }

    /** Frees the set and ends this initialisation (NVML counts them). */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            if (set != null) {
                lib.nvmlEventSetFree(set);
            }
            lib.nvmlShutdown();
        }
    }

    private static void check(NvmlLibrary lib, String call, int r) throws NvmlException {
        Nvml.check(lib, call, r);
    }

    private static String text(byte[] buffer) {
        return Nvml.text(buffer);
    }
}
