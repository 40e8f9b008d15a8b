// MIG through NVML: read the cards' profiles, placements and slices; create a slice at a placement
// (GPU instance, then one compute instance over all of it); destroy one. Each call is one init..shutdown.
package rsmap.device.nvml;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The calls NVIDIA's DRA driver makes to partition on demand: nvmlDeviceCreateGpuInstanceWithPlacement at a
 * placement from nvmlDeviceGetGpuInstancePossiblePlacements_v2, then nvmlGpuInstanceCreateComputeInstance
 * with the compute profile that spans the whole GPU instance; the MIG UUID is the MIG device handle's whose
 * GPU and compute instance ids match. A creation that fails half way destroys what it made before it
 * throws. Destroying takes compute instances first (NVML refuses a GPU instance in use).
 */
public final class Mig {
    // nvml.h: NVML_GPU_INSTANCE_PROFILE_COUNT, NVML_COMPUTE_INSTANCE_PROFILE_COUNT,
    // NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, NVML_DEVICE_MIG_ENABLE.
    private static final int GI_PROFILES = 0x12;
    private static final int CI_PROFILES = 0x9;
    private static final int ENGINE_SHARED = 0;
    private static final int MIG_ENABLE = 1;
    static final int NOT_FOUND = 6;
    static final int INVALID_ARGUMENT = 2;

    private final NvmlLibrary lib;

    private Mig(NvmlLibrary lib) {
        this.lib = lib;
    }

    /** MIG of the NVML library {@code library} (as {@link Nvml#load} names it). */
    public static Mig load(String library) throws NvmlException {
        try {
            return new Mig(Native.load(library, NvmlLibrary.class));
        } catch (UnsatisfiedLinkError e) {
            throw new NvmlException("dlopen " + library, Nvml.LIBRARY_NOT_FOUND, "cannot be loaded");
        }
    }

    /** Every card that answers nvmlDeviceGetMigMode (cards without MIG are left out). */
    public List<MigCard> read() throws NvmlException {
        return session(() -> {
            IntByReference count = new IntByReference();
            check("nvmlDeviceGetCount_v2", lib.nvmlDeviceGetCount_v2(count));
            List<MigCard> out = new ArrayList<>();
            for (int i = 0; i < count.getValue(); i++) {
                PointerByReference h = new PointerByReference();
                if (lib.nvmlDeviceGetHandleByIndex_v2(i, h) != Nvml.SUCCESS) {
                    continue; // a lost card: discovery says so
                }
                card(i, h.getValue()).ifPresent(out::add);
            }
            return out;
        });
    }

    /**
     * Creates a slice of profile {@code profile} at memory slice {@code start} on the card {@code cardUuid}.
     *
     * @throws NvmlException the call that failed (NVML_ERROR_INSUFFICIENT_RESOURCES: the placement is taken
     *                       or the card cannot), after destroying what was made
     */
    public MigCard.Slice create(String cardUuid, String profile, int start) throws NvmlException {
        return session(() -> {
            Pointer d = device(cardUuid);
            MigCard.Profile p = profiles(d, "").stream().filter(x -> x.name().equals(profile)).findFirst()
                    .orElseThrow(() -> new NvmlException("nvmlDeviceGetGpuInstanceProfileInfoV (" + cardUuid + ")",
                            Nvml.NOT_SUPPORTED, "no profile " + profile));
            MigCard.Placement at = p.placements().stream().filter(x -> x.start() == start).findFirst()
                    .orElseThrow(() -> new NvmlException("nvmlDeviceGetGpuInstancePossiblePlacements_v2 (" + cardUuid
                            + ")", INVALID_ARGUMENT, "no placement at " + start + " for " + profile));
            PointerByReference gi = new PointerByReference();
            check("nvmlDeviceCreateGpuInstanceWithPlacement (" + cardUuid + ", " + profile + " at " + start + ")",
                    lib.nvmlDeviceCreateGpuInstanceWithPlacement(d, p.id(), new int[] {at.start(), at.size()}, gi));
            try {
                NvmlLibrary.GpuInstanceInfo info = new NvmlLibrary.GpuInstanceInfo();
                check("nvmlGpuInstanceGetInfo", lib.nvmlGpuInstanceGetInfo(gi.getValue(), info));
                int ciProfile = fullComputeProfile(gi.getValue(), p.slices());
                PointerByReference ci = new PointerByReference();
                check("nvmlGpuInstanceCreateComputeInstance (" + cardUuid + ", gi " + info.id + ")",
                        lib.nvmlGpuInstanceCreateComputeInstance(gi.getValue(), ciProfile, ci));
                NvmlLibrary.ComputeInstanceInfo cinfo = new NvmlLibrary.ComputeInstanceInfo();
                int r = lib.nvmlComputeInstanceGetInfo_v2(ci.getValue(), cinfo);
                if (r != Nvml.SUCCESS) {
                    lib.nvmlComputeInstanceDestroy(ci.getValue());
                    check("nvmlComputeInstanceGetInfo_v2", r);
                }
                Optional<String> uuid = migUuid(d, info.id, cinfo.id);
                if (uuid.isEmpty()) {
                    lib.nvmlComputeInstanceDestroy(ci.getValue());
                    throw new NvmlException("nvmlDeviceGetMigDeviceHandleByIndex (" + cardUuid + ")", NOT_FOUND,
                            "no MIG device for gi " + info.id + " ci " + cinfo.id);
                }
                return new MigCard.Slice(cardUuid, profile, info.id, at, Optional.of(cinfo.id), uuid);
            } catch (NvmlException e) {
                lib.nvmlGpuInstanceDestroy(gi.getValue()); // best effort: the caller is told the first failure
                throw e;
            }
        });
    }

    /**
     * Destroys GPU instance {@code gi} of card {@code cardUuid} and its compute instances; true if it
     * existed (false: nothing to do, as after a destroy that was not answered).
     */
    public boolean destroy(String cardUuid, int gi) throws NvmlException {
        return session(() -> {
            Pointer d = device(cardUuid);
            for (MigCard.Profile p : profiles(d, "")) {
                for (Pointer g : gpuInstances(d, p)) {
                    NvmlLibrary.GpuInstanceInfo info = new NvmlLibrary.GpuInstanceInfo();
                    check("nvmlGpuInstanceGetInfo", lib.nvmlGpuInstanceGetInfo(g, info));
                    if (info.id != gi) {
                        continue;
                    }
                    for (Pointer ci : computeInstances(g)) {
                        check("nvmlComputeInstanceDestroy (" + cardUuid + ", gi " + gi + ")",
                                lib.nvmlComputeInstanceDestroy(ci));
                    }
                    check("nvmlGpuInstanceDestroy (" + cardUuid + ", gi " + gi + ")", lib.nvmlGpuInstanceDestroy(g));
                    return true;
                }
            }
            return false;
        });
    }

    private interface Call<T> {
        T run() throws NvmlException;
    }

    private <T> T session(Call<T> call) throws NvmlException {
        check("nvmlInit_v2", lib.nvmlInit_v2());
        try {
            return call.run();
        } finally {
            lib.nvmlShutdown();
        }
    }

    private Pointer device(String uuid) throws NvmlException {
        IntByReference count = new IntByReference();
        check("nvmlDeviceGetCount_v2", lib.nvmlDeviceGetCount_v2(count));
        for (int i = 0; i < count.getValue(); i++) {
            PointerByReference h = new PointerByReference();
            byte[] u = new byte[96];
            if (lib.nvmlDeviceGetHandleByIndex_v2(i, h) == Nvml.SUCCESS
                    && lib.nvmlDeviceGetUUID(h.getValue(), u, u.length) == Nvml.SUCCESS && text(u).equals(uuid)) {
                return h.getValue();
            }
        }
        throw new NvmlException("nvmlDeviceGetHandleByIndex_v2", Nvml.GPU_IS_LOST, "no card " + uuid);
    }

    private Optional<MigCard> card(int index, Pointer d) throws NvmlException {
        IntByReference current = new IntByReference();
        IntByReference pending = new IntByReference();
        try {
            if (lib.nvmlDeviceGetMigMode(d, current, pending) != Nvml.SUCCESS) {
                return Optional.empty(); // not MIG-capable (NOT_SUPPORTED)
            }
        } catch (UnsatisfiedLinkError e) {
            return Optional.empty(); // a driver older than MIG (before R450) has no such function
        }
        byte[] u = new byte[96];
        check("nvmlDeviceGetUUID (gpu " + index + ")", lib.nvmlDeviceGetUUID(d, u, u.length));
        IntByReference minor = new IntByReference();
        check("nvmlDeviceGetMinorNumber (gpu " + index + ")", lib.nvmlDeviceGetMinorNumber(d, minor));
        String uuid = text(u);
        boolean on = current.getValue() == MIG_ENABLE;
        List<MigCard.Profile> profiles = on ? profiles(d, " (gpu " + index + ")") : List.of();
        List<MigCard.Slice> slices = new ArrayList<>();
        if (on) {
            java.util.Map<String, String> uuids = migUuids(d);
            for (MigCard.Profile p : profiles) {
                for (Pointer g : gpuInstances(d, p)) {
                    NvmlLibrary.GpuInstanceInfo info = new NvmlLibrary.GpuInstanceInfo();
                    check("nvmlGpuInstanceGetInfo", lib.nvmlGpuInstanceGetInfo(g, info));
                    List<Pointer> cis = computeInstances(g);
                    Optional<Integer> ci = Optional.empty();
                    if (!cis.isEmpty()) {
                        NvmlLibrary.ComputeInstanceInfo c = new NvmlLibrary.ComputeInstanceInfo();
                        check("nvmlComputeInstanceGetInfo_v2", lib.nvmlComputeInstanceGetInfo_v2(cis.get(0), c));
                        ci = Optional.of(c.id);
                    }
                    Optional<String> mig = ci.map(c -> uuids.get(info.id + "/" + c));
                    slices.add(new MigCard.Slice(uuid, p.name(), info.id, new MigCard.Placement(info.start, info.size),
                            ci, mig));
                }
            }
        }
        return Optional.of(new MigCard(uuid, index, minor.getValue(), on, profiles, slices));
    }

    /** The card's GPU instance profiles, nvml.h's order (smallest first), with their possible placements. */
    private List<MigCard.Profile> profiles(Pointer d, String at) throws NvmlException {
        List<MigCard.Profile> out = new ArrayList<>();
        for (int k = 0; k < GI_PROFILES; k++) {
            NvmlLibrary.GpuInstanceProfileInfo info = new NvmlLibrary.GpuInstanceProfileInfo();
            if (lib.nvmlDeviceGetGpuInstanceProfileInfoV(d, k, info) != Nvml.SUCCESS) {
                continue; // NOT_SUPPORTED: not a profile of this card
            }
            IntByReference n = new IntByReference();
            check("nvmlDeviceGetGpuInstancePossiblePlacements_v2" + at,
                    lib.nvmlDeviceGetGpuInstancePossiblePlacements_v2(d, info.id, null, n));
            int[] raw = new int[Math.max(1, 2 * n.getValue())];
            check("nvmlDeviceGetGpuInstancePossiblePlacements_v2" + at,
                    lib.nvmlDeviceGetGpuInstancePossiblePlacements_v2(d, info.id, raw, n));
            List<MigCard.Placement> placements = new ArrayList<>();
            for (int i = 0; i < n.getValue(); i++) {
                placements.add(new MigCard.Placement(raw[2 * i], raw[2 * i + 1]));
            }
            String name = text(info.name).replaceFirst("^MIG ", "");
            out.add(new MigCard.Profile(k, info.id, name, info.sliceCount, info.memorySizeMB, placements));
        }
        out.sort(java.util.Comparator.comparingInt(MigCard.Profile::slices).thenComparingLong(MigCard.Profile::memoryMib));
        return out;
    }

    private List<Pointer> gpuInstances(Pointer d, MigCard.Profile p) throws NvmlException {
        Pointer[] gis = new Pointer[Math.max(8, p.placements().size())];
        IntByReference n = new IntByReference();
        check("nvmlDeviceGetGpuInstances", lib.nvmlDeviceGetGpuInstances(d, p.id(), gis, n));
        return List.copyOf(java.util.Arrays.asList(gis).subList(0, n.getValue()));
    }

    private List<Pointer> computeInstances(Pointer gi) throws NvmlException {
        List<Pointer> out = new ArrayList<>();
        for (int k = 0; k < CI_PROFILES; k++) {
            NvmlLibrary.ComputeInstanceProfileInfo info = new NvmlLibrary.ComputeInstanceProfileInfo();
            if (lib.nvmlGpuInstanceGetComputeInstanceProfileInfoV(gi, k, ENGINE_SHARED, info) != Nvml.SUCCESS) {
                continue;
            }
            Pointer[] cis = new Pointer[Math.max(8, info.instanceCount)];
            IntByReference n = new IntByReference();
            check("nvmlGpuInstanceGetComputeInstances", lib.nvmlGpuInstanceGetComputeInstances(gi, info.id, cis, n));
            out.addAll(java.util.Arrays.asList(cis).subList(0, n.getValue()));
        }
        return out;
    }

    /** The compute profile spanning all {@code slices} of a GPU instance (the one a whole slice gets). */
    private int fullComputeProfile(Pointer gi, int slices) throws NvmlException {
        for (int k = 0; k < CI_PROFILES; k++) {
            NvmlLibrary.ComputeInstanceProfileInfo info = new NvmlLibrary.ComputeInstanceProfileInfo();
            if (lib.nvmlGpuInstanceGetComputeInstanceProfileInfoV(gi, k, ENGINE_SHARED, info) == Nvml.SUCCESS
                    && info.sliceCount == slices) {
                return info.id;
            }
        }
        throw new NvmlException("nvmlGpuInstanceGetComputeInstanceProfileInfoV", Nvml.NOT_SUPPORTED,
                "no compute profile of " + slices + " slices");
    }

    /** "gi/ci" to MIG UUID of every MIG device of the card. */
    private java.util.Map<String, String> migUuids(Pointer d) throws NvmlException {
        java.util.Map<String, String> out = new java.util.HashMap<>();
        IntByReference max = new IntByReference();
        check("nvmlDeviceGetMaxMigDeviceCount", lib.nvmlDeviceGetMaxMigDeviceCount(d, max));
        for (int i = 0; i < max.getValue(); i++) {
            PointerByReference m = new PointerByReference();
            if (lib.nvmlDeviceGetMigDeviceHandleByIndex(d, i, m) != Nvml.SUCCESS) {
                continue; // NOT_FOUND: no MIG device at this index
            }
            IntByReference gi = new IntByReference();
            IntByReference ci = new IntByReference();
            byte[] u = new byte[96];
            check("nvmlDeviceGetGpuInstanceId", lib.nvmlDeviceGetGpuInstanceId(m.getValue(), gi));
            check("nvmlDeviceGetComputeInstanceId", lib.nvmlDeviceGetComputeInstanceId(m.getValue(), ci));
            check("nvmlDeviceGetUUID (MIG device)", lib.nvmlDeviceGetUUID(m.getValue(), u, u.length));
            out.put(gi.getValue() + "/" + ci.getValue(), text(u));
        }
        return out;
    }

    private Optional<String> migUuid(Pointer d, int gi, int ci) throws NvmlException {
        return Optional.ofNullable(migUuids(d).get(gi + "/" + ci));
    }

    private void check(String call, int r) throws NvmlException {
        Nvml.check(lib, call, r);
    }

    private static String text(byte[] buffer) {
        return Nvml.text(buffer);
    }
}
