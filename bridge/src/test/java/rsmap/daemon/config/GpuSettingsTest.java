// The GPU keys of rsmapd.conf (docs/gpus.md, "Declare"): defaults, values read, and each bad value refused
// in one line naming the key, the line and what it takes; an authority refuses them.
package rsmap.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import rsmap.ParseException;

class GpuSettingsTest {
    private static final Path FILE = Path.of("/etc/rsmap/rsmapd.conf");

    private static GpuSettings parse(String... lines) throws ParseException {
        return Config.parse("complexes = c\n" + String.join("\n", lines) + "\n", FILE, "n").gpus();
    }

    @Test
    void defaults() throws Exception {
        GpuSettings s = parse();
        assertThat(s).isEqualTo(GpuSettings.defaults());
        assertThat(s.nvmlLibrary()).contains("libnvidia-ml.so.1");
        assertThat(s.gpuMap()).isEmpty();
        assertThat(s.env()).contains("CUDA_VISIBLE_DEVICES");
        assertThat(s.strict()).isTrue();
    }

    @Test
    void everyKey_read() throws Exception {
        GpuSettings s = parse("nvml_library = off", "gpu_map = gpu", "gpu_shares = 4", "gpu_id = uuid",
                "gpu_check = warn", "gpu_env = off", "gpu_dev_dir = /tmp/dev");
        assertThat(s).isEqualTo(new GpuSettings(Optional.empty(), Optional.of("gpu"), 4, GpuSettings.Id.UUID, false,
                Optional.empty(), Path.of("/tmp/dev"), MigSettings.defaults()));
        assertThat(parse("nvml_library = lib/libnvidia-ml.so.1").nvmlLibrary()).contains("/etc/rsmap/lib/libnvidia-ml.so.1");
    }

    @Test
    void badValues_oneLineEach() {
        String[][] rows = {
            {"gpu_shares = 0", "gpu_shares is a whole number from 1 to 64, not '0'"},
            {"gpu_shares = 65", "gpu_shares is a whole number from 1 to 64, not '65'"},
            {"gpu_id = serial", "gpu_id is index or uuid, not 'serial'"},
            {"gpu_check = maybe", "gpu_check is strict or warn, not 'maybe'"},
            {"gpu_env = SGE_HGR_gpu", "gpu_env is off or one of CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, "
                + "GPU_DEVICE_ORDINAL, not 'SGE_HGR_gpu'"},
            {"gpu_env = LD_PRELOAD", "gpu_env is off or one of CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, "
                + "GPU_DEVICE_ORDINAL, not 'LD_PRELOAD'"},
            {"gpu_map = g(1)", "gpu_map names a resource map of the complex table, not 'g(1)'"},
            {"mig_map = m[x]", "mig_map names a resource map of the complex table, not 'm[x]'"},
            {"gpu_map = gpu\nmig_map = gpu", "mig_map and gpu_map name one map; a card's slices are a map of their own"},
        };
        for (String[] row : rows) {
            assertThatThrownBy(() -> parse(row[0])).as(row[0]).isInstanceOf(ParseException.class)
                    .satisfies(e -> assertThat(((ParseException) e).problem()).isEqualTo(row[1]));
        }
    }

    @Test
    void anAuthority_refusesThem() {
        assertThatThrownBy(() -> Config.parse("complexes = c\nrole = authority\nlisten = 127.0.0.1:7321\ngpu_map = gpu\n",
                FILE, "n")).isInstanceOf(ParseException.class)
                .hasMessageContaining("gpu_map is an execution host's setting");
    }

    @Test
    void migKeys_readAndDefaulted() throws Exception {
        assertThat(parse().mig()).isEqualTo(new MigSettings(java.util.Optional.empty(), MigSettings.CAPS_FILE));
        assertThat(parse("mig_map = mig", "mig_caps_file = caps/mig-minors").mig()).isEqualTo(new MigSettings(
                java.util.Optional.of("mig"), Path.of("/etc/rsmap/caps/mig-minors")));
    }
}
