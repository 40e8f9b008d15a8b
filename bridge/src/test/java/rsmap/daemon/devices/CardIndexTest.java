// The one card index (issue 45): which gpu_map instance is which card, by one rule - a card's device node in
// devices=, else the id by gpu_id - for health, MIG and the GPU variable alike.
package rsmap.daemon.devices;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.GpuSettings;
import rsmap.device.nvml.Gpu;
import rsmap.device.nvml.Inventory;
import rsmap.map.ComplexValues;
import rsmap.map.ResourceMap;

class CardIndexTest {
    private static final Inventory INV = new Inventory("1", "2.0", List.of(
            new Gpu(0, "GPU-a", "m", 0, 1, "p", OptionalInt.empty(), "8.0"),
            new Gpu(1, "GPU-b", "m", 1, 1, "p", OptionalInt.empty(), "8.0")), List.of());

    private static GpuSettings settings(GpuSettings.Id id) {
        GpuSettings d = GpuSettings.defaults();
        return new GpuSettings(d.nvmlLibrary(), Optional.of("gpu"), d.shares(), id, d.strict(), d.env(), Path.of("/dev"),
                d.mig());
    }

    private static ResourceMap map(String values) throws Exception {
        ComplexTable table = ComplexTable.parse("gpu gpu RSMAP <= YES YES NONE 0\n"
                + "devices devices STRING == YES NO NONE 0\n");
        return ComplexValues.parse(values, table).resourceMap("gpu").orElseThrow();
    }

    /** Moved from GpuMapTest: the GPU variable names each card once, in grant order. */
    @Test
    void uuids_eachCardOnce_inGrantOrder() {
        assertThat(CardIndex.built(INV, settings(GpuSettings.Id.INDEX)).uuids(List.of("1", "0", "1", "0")))
                .containsExactly("GPU-b", "GPU-a");
        assertThat(CardIndex.built(INV, settings(GpuSettings.Id.UUID)).uuids(List.of("GPU-b"))).containsExactly("GPU-b");
        assertThat(CardIndex.built(INV, settings(GpuSettings.Id.INDEX)).uuids(List.of())).isEmpty();
    }

    /** Each row: a gpu_map, the gpu_id mode, and the ids of card GPU-a then GPU-b. */
    @Test
    void of_table_aNodeInDevicesFirst_elseTheIdByGpuId() throws Exception {
        Object[][] rows = {
            {"gpu=4(0 0 1 1)", GpuSettings.Id.INDEX, List.of("0"), List.of("1")},
            {"gpu=2(GPU-b GPU-a)", GpuSettings.Id.UUID, List.of("GPU-a"), List.of("GPU-b")},
            {"gpu=2(GPU-b GPU-a)", GpuSettings.Id.INDEX, List.of("GPU-a"), List.of("GPU-b")}, // a UUID is read as one
            // hand-written: devices= names the card, whatever the id says
            {"gpu=2(x[devices=/dev/nvidia1:rw] y[devices=/dev/nvidia0:rw])", GpuSettings.Id.INDEX, List.of("y"), List.of("x")},
            {"gpu=2(0[devices=/dev/nvidia1:rw] 1[devices=/dev/nvidia0:rw])", GpuSettings.Id.INDEX, List.of("1"), List.of("0")},
            // an instance naming no card is no card's
            {"gpu=2(0 z)", GpuSettings.Id.INDEX, List.of("0"), List.of()},
            {"gpu=1(0[devices=/dev/null:rw])", GpuSettings.Id.INDEX, List.of(), List.of()},
        };
        for (Object[] row : rows) {
            CardIndex x = CardIndex.of(INV, settings((GpuSettings.Id) row[1]), map((String) row[0]));
            assertThat(x.ids("GPU-a")).as("%s: GPU-a", row[0]).isEqualTo(row[2]);
            assertThat(x.ids("GPU-b")).as("%s: GPU-b", row[0]).isEqualTo(row[3]);
            for (String id : x.ids("GPU-a")) {
                assertThat(x.card(id)).as("%s: %s", row[0], id).contains("GPU-a");
            }
        }
        assertThat(CardIndex.NONE.ids("GPU-a")).isEmpty();
        assertThat(CardIndex.NONE.uuids(List.of("0"))).isEmpty();
    }
}
