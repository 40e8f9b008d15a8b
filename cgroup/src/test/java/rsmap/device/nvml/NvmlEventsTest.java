// NvmlEvents through the stand-in libnvidia-ml.so.1: events appended to the description's events_file
// reach the set once, in order, for the card and type registered; the recheck reads the card's health.
package rsmap.device.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NvmlEventsTest {
    @TempDir
    Path dir;

    private static String uuid(int i) {
        return String.format("GPU-%08x-1111-2222-3333-444455556666", i);
    }

    private String describe(Path events, String health1) {
        String card1 = NvmlStub.card(1, false);
        card1 = card1.substring(0, card1.length() - 1) + ",\"health\":\"" + health1 + "\"}";
        String d = NvmlStub.description(List.of(NvmlStub.card(0, false), card1));
        return d.substring(0, d.length() - 1) + ",\"events_file\":\"" + events + "\"}";
    }

    private static void append(Path events, String line) throws IOException {
        Files.writeString(events, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    @Test
    void next_deliversAppendedEventsOnceInOrder_andTimesOutWhenNoneCame() throws Exception {
        Path events = dir.resolve("events");
        append(events, "{\"uuid\":\"" + uuid(0) + "\",\"type\":\"xid\",\"xid\":31}"); // before the set: not its
        NvmlStub.use(dir.resolve("nvml.json"), describe(events, "ok"));
        try (NvmlEvents e = NvmlEvents.open(NvmlStub.LIBRARY.toString())) {
            assertThat(e.registered()).containsExactly(uuid(0), uuid(1));
            assertThat(e.unregistered()).isEmpty();
            assertThat(e.next(50)).isEmpty();
            append(events, "{\"uuid\":\"" + uuid(1) + "\",\"type\":\"xid\",\"xid\":79}");
            append(events, "{\"uuid\":\"GPU-not-here\",\"type\":\"xid\",\"xid\":48}");
            append(events, "{\"uuid\":\"" + uuid(0) + "\",\"type\":\"double_bit_ecc\"}");
            append(events, "{\"uuid\":\"" + uuid(1) + "\",\"type\":\"gpu_lost\"}");
            assertThat(e.next(1000)).contains(new NvmlEvents.Event(uuid(1), NvmlEvents.Kind.XID, 79));
            assertThat(e.next(1000)).contains(new NvmlEvents.Event(uuid(0), NvmlEvents.Kind.DOUBLE_BIT_ECC, 0));
            assertThat(e.next(1000)).contains(new NvmlEvents.Event(uuid(1), NvmlEvents.Kind.GPU_LOST, 0));
            assertThat(e.next(50)).isEmpty();
            assertThat(new NvmlEvents.Event(uuid(1), NvmlEvents.Kind.XID, 79).reason()).isEqualTo("Xid 79");
        }
    }

    @Test
    void sickness_readsTheCardsHealthAgainAtEachCall() throws Exception {
        Path description = dir.resolve("nvml.json");
        NvmlStub.use(description, describe(dir.resolve("events"), "failed"));
        try (NvmlEvents e = NvmlEvents.open(NvmlStub.LIBRARY.toString())) {
            assertThat(e.sickness(uuid(0))).isEmpty();
            assertThat(e.sickness(uuid(1))).contains("row remapping pending (a reset is needed)");
            Files.writeString(description, describe(dir.resolve("events"), "ok"));
            assertThat(e.sickness(uuid(1))).isEmpty();
            assertThat(e.sickness("GPU-not-here")).get().asString().startsWith("not found by NVML");
        }
    }
}
