// The CDI settings of rsmapd.conf (docs/containers.md): whether rsmapd writes a Container Device Interface
// spec per job, and where.
package rsmap.daemon.config;

import java.nio.file.Path;
import java.util.Map;
import rsmap.Continuation;
import rsmap.ParseException;

/**
 * <pre>
 * cdi     = optional      # off | optional | required: a spec that cannot be written warns, or fails the start
 * cdi_dir = /var/run/cdi  # where runtimes look for CDI specs (podman, Apptainer, containerd, Docker)
 * </pre>
 */
public record CdiSettings(Mode mode, Path dir) {
    /** What a spec that cannot be written does: nothing is written, a warning, or the job start fails closed. */
    public enum Mode { OFF, OPTIONAL, REQUIRED }

    /** The keys, both an execution host's. */
    public static final java.util.List<String> KEYS = java.util.List.of("cdi", "cdi_dir");
    /** The directory every CDI runtime reads (with /etc/cdi); the only ones podman 4.3 reads. */
    public static final Path DEFAULT_DIR = Path.of("/var/run/cdi");

    public static CdiSettings defaults() {
        return new CdiSettings(Mode.OPTIONAL, DEFAULT_DIR);
    }

    public boolean on() {
        return mode != Mode.OFF;
    }

    static CdiSettings parse(Continuation lines, Map<String, String> values, Map<String, Integer> where, Path dir)
            throws ParseException {
        String mode = values.getOrDefault("cdi", "optional");
        Mode m = switch (mode) {
            case "off" -> Mode.OFF;
            case "optional" -> Mode.OPTIONAL;
            case "required" -> Mode.REQUIRED;
            default -> throw lines.error("cdi is off, optional or required, not '" + ConfigText.printable(mode) + "'",
                    where.get("cdi"));
        };
        String d = values.getOrDefault("cdi_dir", DEFAULT_DIR.toString());
        if (d.isEmpty() || d.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw lines.error("cdi_dir is a directory, not '" + ConfigText.printable(d) + "'", where.get("cdi_dir"));
        }
        return new CdiSettings(m, dir.resolve(d).normalize());
    }
}
