// MIG through the stand-in NVML: profiles and placements read, a slice created and destroyed, a taken
// placement and fail_create refused, an admin's slices read from the state file, all as a driver does.
package rsmap.device.nvml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MigTest {
    static final String UUID = "GPU-00000000-1111-2222-3333-444455556666";

    @TempDir
    Path dir;
    Path state;
    Mig mig;

    /** An A100-80GB-like card: seven 1g slices, the profiles and placements NVML reports for one. */
    static String a100(String uuid, int minor, String extra) {
        return "{\"uuid\":\"" + uuid + "\",\"name\":\"NVIDIA A100-SXM4-80GB\",\"minor\":" + minor
                + ",\"memory_mib\":81920,\"pci_bus_id\":\"00000000:3B:00.0\",\"compute_capability\":\"8.0\","
                + "\"mig\":{\"mode\":\"enabled\",\"profiles\":["
                + "{\"name\":\"1g.10gb\",\"slices\":1,\"memory_mib\":9856,\"placements\":[0,1,2,3,4,5,6]},"
                + "{\"name\":\"2g.20gb\",\"slices\":2,\"memory_mib\":19968,\"placements\":[0,2,4]},"
                + "{\"name\":\"3g.40gb\",\"slices\":3,\"memory_mib\":40192,\"placements\":[0,4]},"
                + "{\"name\":\"4g.40gb\",\"slices\":4,\"memory_mib\":40192,\"placements\":[0]},"
                + "{\"name\":\"7g.80gb\",\"slices\":7,\"memory_mib\":80384,\"placements\":[0]}]}" + extra + "}";
    }

    void describe(String extra) throws Exception {
        NvmlStub.use(dir.resolve("nvml.json"), "{\"driver\":\"550.54.15\",\"cuda\":\"12.4\",\"state_file\":\""
                + state + "\",\"gpus\":[" + a100(UUID, 0, extra) + "]}");
    }

    @BeforeEach
    void setUp() throws Exception {
        state = dir.resolve("mig-state.json");
        describe("");
        mig = Mig.load(NvmlStub.LIBRARY.toString());
    }

    @Test
    void read_a100_profilesSmallestFirstWithPossiblePlacements() throws Exception {
        List<MigCard> cards = mig.read();
        assertEquals(1, cards.size());
        MigCard c = cards.get(0);
        assertTrue(c.enabled());
        assertEquals(List.of("1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
                c.profiles().stream().map(MigCard.Profile::name).toList());
        assertEquals(List.of(new MigCard.Placement(0, 4), new MigCard.Placement(4, 4)),
                c.profile("3g.40gb").orElseThrow().placements(), "3 slices occupy 4 memory slices on an A100");
        assertEquals(19968, c.profile("2g.20gb").orElseThrow().memoryMib());
        assertTrue(c.slices().isEmpty());
    }

    @Test
    void create_thenDestroy_sliceExistsInTheDriverStateExactlyBetween() throws Exception {
        MigCard.Slice s = mig.create(UUID, "2g.20gb", 2);
        assertTrue(s.uuid().orElseThrow().startsWith("MIG-"), s.toString());
        assertTrue(Files.readString(state).contains(s.uuid().get()));
        MigCard.Slice seen = mig.read().get(0).slices().get(0);
        assertEquals(s, seen, "read again (a new init) finds the slice with its MIG UUID");
        assertTrue(mig.destroy(UUID, s.gi()));
        assertTrue(mig.read().get(0).slices().isEmpty());
        assertFalse(mig.destroy(UUID, s.gi()), "a second destroy finds nothing to do");
    }

    @Test
    void create_overlappingPlacement_insufficientResourcesAndNothingLeft() throws Exception {
        mig.create(UUID, "3g.40gb", 0);
        NvmlException e = assertThrows(NvmlException.class, () -> mig.create(UUID, "1g.10gb", 3));
        assertEquals(23, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains("NVML_ERROR_INSUFFICIENT_RESOURCES"), e.getMessage());
        assertEquals(1, mig.read().get(0).slices().size());
    }

    @Test
    void create_failCreate_insufficientResourcesNamingTheCall() throws Exception {
        describe(",\"fail_create\":true");
        NvmlException e = assertThrows(NvmlException.class, () -> mig.create(UUID, "1g.10gb", 0));
        assertEquals("nvmlDeviceCreateGpuInstanceWithPlacement (" + UUID + ", 1g.10gb at 0): Insufficient Resources"
                + " (NVML_ERROR_INSUFFICIENT_RESOURCES)", e.getMessage());
        assertTrue(mig.read().get(0).slices().isEmpty());
    }

    @Test
    void read_adminsStaticLayout_fromTheStateFile() throws Exception {
        Files.writeString(state, "{\"instances\":[{\"gpu\":\"" + UUID + "\",\"profile\":\"1g.10gb\",\"placement\":6,"
                + "\"gi\":9,\"ci\":0,\"uuid\":\"MIG-static-1\"}]}");
        MigCard.Slice s = mig.read().get(0).slices().get(0);
        assertEquals(new MigCard.Slice(UUID, "1g.10gb", 9, new MigCard.Placement(6, 1), Optional.of(0),
                Optional.of("MIG-static-1")), s);
        assertThrows(NvmlException.class, () -> mig.create(UUID, "1g.10gb", 6), "its placement is taken");
        mig.create(UUID, "1g.10gb", 5);
        assertEquals(2, mig.read().get(0).slices().size());
    }

    @Test
    void read_migDisabled_cardListedOffWithoutProfiles() throws Exception {
        NvmlStub.use(dir.resolve("nvml.json"), "{\"driver\":\"550.54.15\",\"cuda\":\"12.4\",\"gpus\":["
                + a100(UUID, 0, "").replace("\"enabled\"", "\"disabled\"") + "]}");
        MigCard c = mig.read().get(0);
        assertFalse(c.enabled());
        assertTrue(c.profiles().isEmpty());
        assertThrows(NvmlException.class, () -> mig.create(UUID, "1g.10gb", 0));
    }

    @Test
    void structures_haveNvmlHsSizes_soThatARealDriverAcceptsTheirVersion() {
        // NVML_STRUCT_VERSION(x, 2) is sizeof(x_v2_t) | 2 << 24: a driver refuses a version that does not match.
        assertEquals(152, new NvmlLibrary.GpuInstanceProfileInfo().size());
        assertEquals(152 | 2 << 24, new NvmlLibrary.GpuInstanceProfileInfo().version);
        assertEquals(136, new NvmlLibrary.ComputeInstanceProfileInfo().size());
        assertEquals(136 | 2 << 24, new NvmlLibrary.ComputeInstanceProfileInfo().version);
        assertEquals(24, new NvmlLibrary.GpuInstanceInfo().size(), "nvmlGpuInstanceInfo_t");
        assertEquals(32, new NvmlLibrary.ComputeInstanceInfo().size(), "nvmlComputeInstanceInfo_t");
    }
}
