// The MIG settings of rsmapd.conf (docs/gpus.md, "Partitions on demand"): which map offers slices of the
// host's MIG cards, and where the driver says the minors of the slices' capability nodes.
package rsmap.daemon.config;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import rsmap.Continuation;
import rsmap.ParseException;

/**
 * <pre>
 * mig_map       = mig                                   # the RSMAP of slices, built from NVML (none: no slices)
 * mig_caps_file = /proc/driver/nvidia-caps/mig-minors   # "gpuN/giG/access M" and "gpuN/giG/ciC/access M" lines
 * </pre>
 *
 * @param map      empty: no map of slices
 * @param capsFile the driver's table of capability minors (tests: a file of their own)
 */
public record MigSettings(Optional<String> map, Path capsFile) {
    /** The driver's file. */
    public static final Path CAPS_FILE = Path.of("/proc/driver/nvidia-caps/mig-minors");
    public static final java.util.List<String> KEYS = java.util.List.of("mig_map", "mig_caps_file");
    private static final java.util.regex.Pattern NAME = java.util.regex.Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");

    public MigSettings {
        java.util.Objects.requireNonNull(map, "map");
        java.util.Objects.requireNonNull(capsFile, "capsFile");
    }

    public static MigSettings defaults() {
        return new MigSettings(Optional.empty(), CAPS_FILE);
    }

    static MigSettings parse(Continuation lines, Map<String, String> values, Map<String, Integer> where, Path dir)
            throws ParseException {
        Optional<String> map = Optional.ofNullable(values.get("mig_map"));
        if (map.isPresent() && !NAME.matcher(map.get()).matches()) {
            throw lines.error("mig_map names a resource map of the complex table, not '" + ConfigText.printable(map.get())
                    + "'", where.get("mig_map"));
        }
        if (map.isPresent() && map.equals(Optional.ofNullable(values.get("gpu_map")))) {
            throw lines.error("mig_map and gpu_map name one map; a card's slices are a map of their own",
                    where.get("mig_map"));
        }
        String caps = values.getOrDefault("mig_caps_file", CAPS_FILE.toString());
        if (caps.isEmpty() || caps.chars().anyMatch(c -> c < 0x20)) {
            throw lines.error("mig_caps_file is a path, not '" + ConfigText.printable(caps) + "'", where.get("mig_caps_file"));
        }
        return new MigSettings(map, dir.resolve(caps).normalize());
    }
}
