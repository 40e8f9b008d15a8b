// The GPU settings of rsmapd.conf (docs/gpus.md): which NVML, which map holds the host's NVIDIA cards, how
// it is built or checked, and which variable tells a job its cards.
package rsmap.daemon.config;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import rsmap.Continuation;
import rsmap.ParseException;

/**
 * <pre>
 * nvml_library = libnvidia-ml.so.1   # the loader's, a path, or off (no NVML: nothing discovered)
 * gpu_map      = gpu                 # the RSMAP whose instances are this host's NVIDIA GPUs
 * gpu_shares   = 1                   # instances per card of a built map (1 to 64)
 * gpu_id       = index               # index | uuid: the ids of a built map
 * gpu_check    = strict              # strict | warn: a hand-written gpu_map that is not the hardware
 * gpu_env      = CUDA_VISIBLE_DEVICES  # the variable with the granted cards' UUIDs (or NVIDIA_VISIBLE_DEVICES,
 *                                    # GPU_DEVICE_ORDINAL); off: none
 * gpu_dev_dir  = /dev                # where /dev/nvidiaN, nvidiactl, nvidia-uvm(-tools) are looked up
 * mig_map, mig_caps_file             # slices of MIG cards on demand (MigSettings)
 * </pre>
 *
 * @param nvmlLibrary empty: {@code off}
 * @param gpuMap      empty: no map is the host's GPUs
 * @param env         empty: {@code off}
 */
public record GpuSettings(Optional<String> nvmlLibrary, Optional<String> gpuMap, int shares, Id id, boolean strict,
                          Optional<String> env, Path devDir, MigSettings mig) {
    /** How a built map names its instances. */
    public enum Id { INDEX, UUID }

    /** The keys, all an execution host's. */
    public static final java.util.List<String> KEYS = java.util.List.of("nvml_library", "gpu_map", "gpu_shares", "gpu_id",
            "gpu_check", "gpu_env", "gpu_dev_dir", "mig_map", "mig_caps_file");
    /**
     * The variables gpu_env may name: those the starter and the SPANK plugin take from rsmapd's answer beside
     * SGE_HGR_* (nothing else of a job's environment is rsmapd's to set).
     */
    public static final java.util.List<String> ENV_NAMES = java.util.List.of("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
            "GPU_DEVICE_ORDINAL");
    /** A map's name. */
    private static final java.util.regex.Pattern NAME = java.util.regex.Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");

    /** The defaults: NVML from the loader, no gpu_map. */
    public static GpuSettings defaults() {
        return new GpuSettings(Optional.of(rsmap.device.nvml.Nvml.DEFAULT), Optional.empty(), 1, Id.INDEX, true,
                Optional.of("CUDA_VISIBLE_DEVICES"), Path.of("/dev"), MigSettings.defaults());
    }

    static GpuSettings parse(Continuation lines, Map<String, String> values, Map<String, Integer> where, Path dir)
            throws ParseException {
        String lib = values.getOrDefault("nvml_library", rsmap.device.nvml.Nvml.DEFAULT);
        if (lib.isEmpty() || lib.chars().anyMatch(c -> c < 0x20)) {
            throw lines.error("nvml_library is a library name, a path or off, not '" + ConfigText.printable(lib) + "'",
                    where.get("nvml_library"));
        }
        Optional<String> library = lib.equals("off") ? Optional.empty()
                : Optional.of(lib.contains("/") ? dir.resolve(lib).toString() : lib);
        Optional<String> map = Optional.ofNullable(values.get("gpu_map"));
        if (map.isPresent() && !NAME.matcher(map.get()).matches()) {
            throw lines.error("gpu_map names a resource map of the complex table, not '" + ConfigText.printable(map.get())
                    + "'", where.get("gpu_map"));
        }
        String shares = values.getOrDefault("gpu_shares", "1");
        if (!shares.matches("[0-9]{1,2}") || Integer.parseInt(shares) < 1 || Integer.parseInt(shares) > 64) {
            throw lines.error("gpu_shares is a whole number from 1 to 64, not '" + ConfigText.printable(shares) + "'",
                    where.get("gpu_shares"));
        }
        String id = values.getOrDefault("gpu_id", "index");
        if (!id.equals("index") && !id.equals("uuid")) {
            throw lines.error("gpu_id is index or uuid, not '" + ConfigText.printable(id) + "'", where.get("gpu_id"));
        }
        String check = values.getOrDefault("gpu_check", "strict");
        if (!check.equals("strict") && !check.equals("warn")) {
            throw lines.error("gpu_check is strict or warn, not '" + ConfigText.printable(check) + "'", where.get("gpu_check"));
        }
        String env = values.getOrDefault("gpu_env", "CUDA_VISIBLE_DEVICES");
        if (!env.equals("off") && !ENV_NAMES.contains(env)) {
            throw lines.error("gpu_env is off or one of " + String.join(", ", ENV_NAMES) + ", not '"
                    + ConfigText.printable(env) + "'", where.get("gpu_env"));
        }
        Path devDir = dir.resolve(values.getOrDefault("gpu_dev_dir", "/dev")).normalize();
        return new GpuSettings(library, map, Integer.parseInt(shares), id.equals("uuid") ? Id.UUID : Id.INDEX,
                check.equals("strict"), env.equals("off") ? Optional.empty() : Optional.of(env), devDir,
                MigSettings.parse(lines, values, where, dir));
    }
}
