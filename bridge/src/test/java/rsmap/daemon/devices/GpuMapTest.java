// GpuMap (docs/gpus.md, "Declare"): the built entry reads back as complex_values with shares x cards
// instances for any inventory (seeded random), models without blanks, and each card named once for a job.
package rsmap.daemon.devices;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.Random;
import org.junit.jupiter.api.Test;
import rsmap.complex.ComplexTable;
import rsmap.daemon.GpuStub;
import rsmap.daemon.config.GpuSettings;
import rsmap.device.nvml.Gpu;
import rsmap.device.nvml.Inventory;
import rsmap.map.ComplexValues;
import rsmap.map.ResourceMap;

class GpuMapTest {
    private static ComplexTable table() throws Exception {
        Path dir = Files.createTempDirectory("gpumap");
        Path c = Files.copy(Path.of("..", "examples", "complexes"), dir.resolve("complexes"));
        GpuStub.declareAll(c);
        return ComplexTable.parse(Files.readString(c));
    }

    private static final String[] MODELS = {"NVIDIA A100-SXM4-80GB", "NVIDIA H200", "Tesla V100 (PCIe) 32GB",
        "NVIDIA GeForce RTX 4090", "  Quadro, RTX=8000 [x] "};

    @Test
    void model_blanksAndSeparators_asUnderscore() {
        assertThat(GpuMap.model("NVIDIA A100-SXM4-80GB")).isEqualTo("NVIDIA_A100-SXM4-80GB");
        assertThat(GpuMap.model("  Quadro, RTX=8000 [x] ")).isEqualTo("Quadro__RTX_8000__x_");
    }

    @Test
    void entry_anyInventory_readsBackWithSharesTimesCards() throws Exception {
        ComplexTable table = table();
        long seed = System.nanoTime();
        Random r = new Random(seed);
        for (int round = 0; round < 200; round++) {
            int n = r.nextInt(9);
            List<Gpu> gpus = new ArrayList<>();
            List<Integer> minors = new ArrayList<>(java.util.stream.IntStream.range(0, 64).boxed().toList());
            java.util.Collections.shuffle(minors, r); // a driver gives each card its own minor
            for (int i = 0; i < n; i++) {
                gpus.add(new Gpu(i, GpuStub.uuid(r.nextInt(1 << 20) * 16 + i), MODELS[r.nextInt(MODELS.length)],
                        minors.get(i), (1L + r.nextInt(200_000)) << 20, String.format("00000000:%02X:00.0", i),
                        r.nextBoolean() ? OptionalInt.of(r.nextInt(4)) : OptionalInt.empty(), r.nextInt(12) + "."
                        + r.nextInt(10)));
            }
            int shares = 1 + r.nextInt(8);
            GpuSettings.Id id = r.nextBoolean() ? GpuSettings.Id.INDEX : GpuSettings.Id.UUID;
            String entry = GpuMap.entry("gpu", new Inventory("550.54.15", "12.4", gpus, List.of()), table, shares, id,
                    Path.of("/dev"));
            ResourceMap m = ComplexValues.parse(entry, table).resourceMap("gpu").orElseThrow();
            assertThat(m.amount()).as("seed %d: %s", seed, entry).isEqualTo(n * shares);
            for (int i = 0; i < n; i++) {
                var inst = m.instances().get(i * shares);
                assertThat(inst.id()).isEqualTo(GpuMap.id(gpus.get(i), id));
                assertThat(inst.characteristics().get("uuid").orElseThrow().text()).isEqualTo(gpus.get(i).uuid());
                assertThat(inst.characteristics().get("devices").orElseThrow().text())
                        .startsWith("/dev/nvidia" + gpus.get(i).minor() + ":rw");
                assertThat(GpuMap.check(m, new Inventory("550.54.15", "12.4", gpus, List.of()), Path.of("/dev")))
                        .as("seed %d: a built map passes its own check", seed).isEmpty();
            }
        }
    }

    @Test
    void check_memoryWithinFivePercent_modelWithoutCase() throws Exception {
        ComplexTable table = table();
        Inventory h100 = new Inventory("550.54.15", "12.4", List.of(new Gpu(0, "GPU-a", "NVIDIA H100 80GB HBM3", 0,
                81559L << 20, "00000000:3B:00.0", OptionalInt.empty(), "9.0")), List.of());
        Object[][] rows = { // the declared characteristics, and whether the card is what they say
            {"memory=80G", true}, {"memory=81559M", true}, {"memory=78G", true}, {"memory=40G", false},
            {"memory=96G", false}, {"model=nvidia_h100_80gb_hbm3", true}, {"model=NVIDIA_H100", false},
            {"uuid=GPU-a", true}, {"uuid=GPU-b", false},
        };
        for (Object[] row : rows) {
            ResourceMap m = ComplexValues.parse("gpu=1(0[devices=/dev/nvidia0:rw," + row[0] + "])", table)
                    .resourceMap("gpu").orElseThrow();
            assertThat(GpuMap.check(m, h100, Path.of("/dev")).isEmpty()).as((String) row[0]).isEqualTo(row[1]);
        }
    }
}
