// The health settings of rsmapd.conf (docs/health.md): a site's own check, how often the taints are
// checked again, and the Xids that are an application's fault.
package rsmap.daemon.config;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import rsmap.Continuation;
import rsmap.ParseException;

/**
 * <pre>
 * health_command  = /usr/libexec/rsmap/gpu-check   # run as root every health_interval; none by default
 * health_interval = 60                              # seconds (1 to 86400): the check, and NVML's recheck of every card
 * health_timeout  = 30                              # seconds (1 to 3600): a check running longer is killed
 * gpu_ignore_xids = 13,31,43,45,68,109              # Xids that taint nothing (NVIDIA: the application's fault)
 * </pre>
 */
public record HealthSettings(Optional<Path> command, int interval, int timeout, Set<Long> ignoredXids) {
    /** The Xids NVIDIA's XID catalogue lays at the application's door (its device plugins skip the same). */
    static final Set<Long> APPLICATION_XIDS = Set.of(13L, 31L, 43L, 45L, 68L, 109L);
    /** The keys, all rsmapd.conf's (docs/health.md). */
    public static final List<String> KEYS = List.of("health_command", "health_interval", "health_timeout", "gpu_ignore_xids");

    public HealthSettings {
        ignoredXids = Set.copyOf(ignoredXids);
    }

    public static HealthSettings defaults() {
        return new HealthSettings(Optional.empty(), 60, 30, APPLICATION_XIDS);
    }

    static HealthSettings parse(Continuation lines, Map<String, String> values, Map<String, Integer> where, Path dir)
            throws ParseException {
        Optional<Path> command = Optional.empty();
        String c = values.get("health_command");
        if (c != null && !c.equals("none")) {
            if (c.isEmpty() || c.chars().anyMatch(ch -> ch < 0x20 || ch == ' ') || !c.startsWith("/")) {
                throw lines.error("health_command is an absolute path of a program (no arguments) or none, not '"
                        + ConfigText.printable(c) + "'", where.get("health_command"));
            }
            command = Optional.of(dir.resolve(c));
        }
        int interval = seconds(lines, values, where, "health_interval", 60, 86_400);
        int timeout = seconds(lines, values, where, "health_timeout", 30, 3_600);
        Set<Long> xids = APPLICATION_XIDS;
        String x = values.get("gpu_ignore_xids");
        if (x != null) {
            Set<Long> read = new TreeSet<>();
            for (String part : x.strip().isEmpty() || x.strip().equals("none") ? new String[0] : x.split(",")) {
                String n = part.strip();
                if (!n.matches("[0-9]{1,6}")) {
                    throw lines.error("gpu_ignore_xids is a comma list of Xid numbers (or none), not '"
                            + ConfigText.printable(x) + "'", where.get("gpu_ignore_xids"));
                }
                read.add(Long.parseLong(n));
            }
            xids = read;
        }
        return new HealthSettings(command, interval, timeout, xids);
    }

    private static int seconds(Continuation lines, Map<String, String> values, Map<String, Integer> where, String key,
                               int dflt, int max) throws ParseException {
        String v = values.get(key);
        if (v == null) {
            return dflt;
        }
        if (!v.matches("[0-9]{1,9}") || Integer.parseInt(v) < 1 || Integer.parseInt(v) > max) {
            throw lines.error(key + " is a whole number of seconds from 1 to " + max + ", not '" + ConfigText.printable(v)
                    + "'", where.get(key));
        }
        return Integer.parseInt(v);
    }
}
