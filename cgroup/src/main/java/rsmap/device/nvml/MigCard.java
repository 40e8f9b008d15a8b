// One MIG-capable card as NVML reports it: its mode, the GPU instance profiles it offers, the slices that exist.
package rsmap.device.nvml;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * @param uuid      the card's {@code GPU-...}
 * @param index     NVML's index
 * @param minor     N of /dev/nvidiaN (the capability minors are per card: {@code gpuN/gi.../access})
 * @param enabled   nvmlDeviceGetMigMode's current mode is NVML_DEVICE_MIG_ENABLE
 * @param profiles  the GPU instance profiles the card supports, smallest first (nvml.h's profile order)
 * @param slices    the GPU instances that exist now, with their compute instance where one exists
 */
public record MigCard(String uuid, int index, int minor, boolean enabled, List<Profile> profiles, List<Slice> slices) {
    public MigCard {
        Objects.requireNonNull(uuid, "uuid");
        profiles = List.copyOf(profiles);
        slices = List.copyOf(slices);
    }

    /** The profile named {@code name} ({@code 3g.40gb}), if the card has it. */
    public Optional<Profile> profile(String name) {
        return profiles.stream().filter(p -> p.name().equals(name)).findFirst();
    }

    /** Memory slices a placement occupies: {@code [start, start + size)}. */
    public record Placement(int start, int size) {
        public boolean overlaps(Placement o) {
            return start < o.start + o.size && o.start < start + size;
        }

        @Override
        public String toString() {
            return start + "+" + size;
        }
    }

    /**
     * A GPU instance profile.
     *
     * @param index      nvml.h's NVML_GPU_INSTANCE_PROFILE_* it was asked by
     * @param id         the profile's id on this card (what creation and placements take)
     * @param name       {@code 1g.10gb} (NVML's name without its {@code MIG } prefix)
     * @param slices     compute slices (sliceCount)
     * @param memoryMib  memorySizeMB
     * @param placements nvmlDeviceGetGpuInstancePossiblePlacements_v2: every placement, taken or not
     */
    public record Profile(int index, int id, String name, int slices, long memoryMib, List<Placement> placements) {
        public Profile {
            Objects.requireNonNull(name, "name");
            placements = List.copyOf(placements);
        }
    }

    /**
     * A GPU instance and its compute instance: a slice.
     *
     * @param profile   its profile's name
     * @param gi        the GPU instance's id on the card
     * @param placement where it sits
     * @param ci        the compute instance's id, empty for a GPU instance without one
     * @param uuid      the MIG device's {@code MIG-...}, empty without a compute instance
     */
    public record Slice(String card, String profile, int gi, Placement placement, Optional<Integer> ci,
                        Optional<String> uuid) {
        public Slice {
            Objects.requireNonNull(card, "card");
            Objects.requireNonNull(profile, "profile");
            Objects.requireNonNull(placement, "placement");
            Objects.requireNonNull(ci, "ci");
            Objects.requireNonNull(uuid, "uuid");
        }
    }
}
