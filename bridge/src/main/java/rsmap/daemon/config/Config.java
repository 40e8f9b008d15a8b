// rsmapd.conf: what the daemon reads at start and on RELOAD; every error names the file, line and reason.
package rsmap.daemon.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import rsmap.Continuation;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.device.Backends;
import rsmap.device.Isolation;
import rsmap.node.AttributeTypes;
import rsmap.node.Filter;
import rsmap.wire.FrameDecoder;

/**
 * The daemon's settings, {@code key = value} one per line, {@code #} comments, a {@code \} at a line end
 * continues it (long complex_values). Paths are read relative to the file's folder.
 *
 * <pre>
 * complexes             = /etc/rsmap/complexes          # the complex table (qconf -sc format)
 * host                  = node01                        # this host's name (default: the system's)
 * complex_values        = gpu=2(gpu0[devices=/dev/nvidia0:rw] gpu1[devices=/dev/nvidia1:rw])
 * global_complex_values = lic=4(la lb lc ld)
 * socket                = /run/rsmap/rsmapd.sock
 * socket_group          = rsmap
 * socket_mode           = 0660                          # octal; 0666 lets every job owner's starter connect
 * state_dir             = /var/lib/rsmap
 * device_backend        = auto                          # auto | systemd | cgroup-v1 | dry-run
 * isolation             = required                      # required | optional | off
 * execd_spool           = /var/spool/sge/node01         # must hold active_jobs/
 * admin_user            = root
 * daemon_user           = root                          # the user rsmapd runs as; the hooks trust no other
 * max_frame             = 1048576
 * max_rsmap_ids         = 512
 * reconcile_interval    = 60                            # seconds between reconciliations (0: at start only)
 * max_connections_per_user = 32                         # connections one unprivileged user may hold
 * idle_timeout          = 300                           # seconds a connection may sit idle
 * frame_timeout         = 10                            # seconds a begun frame may take to arrive
 * realloc               = on                            # on | off: running jobs may grow and shrink (RFC 51)
 * realloc_policy        = fifo                          # fifo | smallest: the order waiting reallocs are served
 * realloc_max_grow      = start                         # N, start or map=N,...: how far a job may grow beyond its start
 * alternatives_policy   = user                          # user | fewest | ranking L1,L2: order of alternatives
 * role                  = host                          # host | authority
 * authority             = node00:7321,node01:7321       # a host's authority of the global maps, then its standbys
 * listen                = 0.0.0.0:7321                  # an authority's TCP address
 * takeover_timeout      = 10                            # seconds an authority's lease may go unrenewed (Lease)
 * munge_socket          = /run/munge/munge.socket.2     # munged's socket (hosts and authority)
 * attributes            = cpu_speed=2.4GHz,fabric=hdr   # host attributes, added to or over the discovered
 * attribute_types       = fabric:string,gpu_arch:version # string | number | version | boolean
 * slots                 = 64                            # the host's slot capacity (default: cpus)
 * filter                = arch != "ppc64le"             # the admin limit every job must pass
 * discover              = on                            # on | off: read arch, kernel, os, cpus, ... (Discovery)
 * nvml_library          = libnvidia-ml.so.1             # NVML, or off (GpuSettings: gpu_map, gpu_shares, ...)
 * gpu_map               = gpu                           # the map of this host's NVIDIA GPUs (docs/gpus.md)
 * cdi                   = optional                      # off | optional | required: a CDI spec per job (CdiSettings)
 * cdi_dir               = /var/run/cdi                  # where the specs go (docs/containers.md)
 * health_command        = /usr/libexec/rsmap/gpu-check  # a site's check (HealthSettings: health_interval, ...)
 * </pre>
 * An authority serves the global maps of the cluster (global_complex_values) to the hosts: host,
 * complex_values, authority and execd_spool are refused there, listen is required. A host with an
 * authority takes its global maps from it: global_complex_values is refused beside authority.
 */
public record Config(Path complexes, String host, String complexValues, String globalComplexValues, Path socket,
                     String socketGroup, String socketMode, Path stateDir, String deviceBackend, Isolation.Mode isolation, Path execdSpool,
                     String adminUser, String daemonUser, int maxFrame, int maxRsmapIds, int reconcileInterval,
                     int maxConnectionsPerUser, int idleTimeout, int frameTimeout, boolean realloc, String reallocPolicy,
                     Role role, Authorities authority, Endpoint listen, Path mungeSocket, Map<String, String> attributes,
                     AttributeTypes attributeTypes, OptionalInt slots, Optional<Filter> filter, boolean discover,
                     rsmap.place.Policy alternativesPolicy, GpuSettings gpus, Map<String, Integer> lines,
                     MaxGrow reallocMaxGrow, CdiSettings cdi, int takeoverTimeout, HealthSettings health) {

    /** What the daemon is: an execution host's, or the cluster's authority of the global maps. */
    public enum Role { HOST, AUTHORITY }

    /** MUNGE's own default socket. */
    static final Path MUNGE_SOCKET = Path.of("/run/munge/munge.socket.2");

    public boolean isAuthority() {
        return role == Role.AUTHORITY;
    }

    /** The line of the file that set {@code key}, 0 when the file does not set it. */
    public int lineOf(String key) {
        return lines.getOrDefault(key, 0);
    }

    private static final Set<String> KEYS = Set.of("complexes", "host", "complex_values", "global_complex_values",
            "socket", "socket_group", "socket_mode", "state_dir", "device_backend", "isolation", "execd_spool", "admin_user",
            "daemon_user", "max_frame", "max_rsmap_ids", "reconcile_interval", "max_connections_per_user", "idle_timeout",
            "frame_timeout", "realloc", "realloc_policy", "role", "authority", "listen", "munge_socket", "attributes",
            "attribute_types", "slots", "filter", "discover", "alternatives_policy", "realloc_max_grow", "nvml_library",
            "gpu_map", "gpu_shares", "gpu_id", "gpu_check", "gpu_env", "gpu_dev_dir", "cdi", "cdi_dir", "takeover_timeout",
            "health_command", "health_interval", "health_timeout", "gpu_ignore_xids", "mig_map", "mig_caps_file");

    /** Reads the text of {@code file}; {@code defaultHost} stands where the file names no host. */
    public static Config parse(String text, Path file, String defaultHost) throws ParseException {
        Continuation lines = Continuation.of(text);
        String in = lines.joined();
        Map<String, String> values = new LinkedHashMap<>();
        Map<String, Integer> where = new LinkedHashMap<>();
        Map<String, Integer> valueAt = new LinkedHashMap<>(); // where each value begins, for errors with a column
        int start = 0;
        while (start <= in.length()) {
            int end = in.indexOf('\n', start);
            if (end < 0) {
                end = in.length();
            }
            String line = in.substring(start, end);
            int hash = line.indexOf('#');
            String content = (hash >= 0 ? line.substring(0, hash) : line).strip();
            if (!content.isEmpty()) {
                int eq = content.indexOf('=');
                int at = start + line.indexOf(content.charAt(0));
                if (eq < 0) {
                    throw lines.error("expected 'key = value'", at);
                }
                String key = content.substring(0, eq).strip().toLowerCase(Locale.ROOT);
                String value = content.substring(eq + 1).strip();
                if (!KEYS.contains(key)) {
                    throw lines.error("unknown setting '" + key + "' (" + String.join(", ", new java.util.TreeSet<>(KEYS))
                            + ")", at);
                }
                if (values.put(key, value) != null) {
                    throw lines.error("'" + key + "' is set twice", at);
                }
                where.put(key, at);
                String rest = content.substring(eq + 1);
                valueAt.put(key, at + eq + 1 + rest.length() - rest.stripLeading().length());
            }
            start = end + 1;
        }
        Path dir = file.toAbsolutePath().getParent();
        if (!values.containsKey("complexes")) {
            throw lines.error("'complexes' is missing: name the complex table", 0);
        }
        String backend = values.getOrDefault("device_backend", "auto");
        if (!Backends.NAMES.contains(backend)) {
            throw lines.error("device_backend is one of " + Backends.NAMES + ", not '" + backend + "'",
                    where.get("device_backend"));
        }
        String iso = values.getOrDefault("isolation", "required");
        Isolation.Mode mode;
        try {
            mode = Isolation.Mode.valueOf(iso.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw lines.error("isolation is required, optional or off, not '" + iso + "'", where.get("isolation"));
        }
        String roleText = values.getOrDefault("role", "host");
        if (!roleText.equals("host") && !roleText.equals("authority")) {
            throw lines.error("role is host or authority, not '" + ConfigText.printable(roleText) + "'", where.get("role"));
        }
        Role role = roleText.equals("host") ? Role.HOST : Role.AUTHORITY;
        if (role == Role.AUTHORITY) {
            List<String> hostKeys = new java.util.ArrayList<>(List.of("host", "complex_values", "authority", "execd_spool",
                    "attributes", "slots", "discover"));
            hostKeys.addAll(GpuSettings.KEYS);
            hostKeys.addAll(CdiSettings.KEYS);
            for (String hostOnly : hostKeys) {
                if (values.containsKey(hostOnly)) {
                    throw lines.error(hostOnly + " is an execution host's setting: an authority (role = authority) "
                            + "serves global_complex_values only", where.get(hostOnly));
                }
            }
            if (!values.containsKey("listen")) {
                throw lines.error("an authority (role = authority) needs listen = ADDRESS:PORT, where hosts connect",
                        where.get("role"));
            }
        } else {
            if (values.containsKey("takeover_timeout")) {
                throw lines.error("takeover_timeout is an authority's setting (role = authority): how long its standby"
                        + " waits for a lease that is not renewed", where.get("takeover_timeout"));
            }
            if (values.containsKey("listen")) {
                throw lines.error("listen is an authority's setting (role = authority); a host connects to its "
                        + "authority = HOST:PORT", where.get("listen"));
            }
            if (values.containsKey("authority") && values.containsKey("global_complex_values")) {
                throw lines.error("global_complex_values beside authority: the authority serves the global maps, "
                        + "a host with an authority has none of its own", where.get("global_complex_values"));
            }
        }
        Authorities authority = null;
        if (values.containsKey("authority")) {
            try {
                authority = Authorities.parse(values.get("authority"));
            } catch (IllegalArgumentException e) {
                throw lines.error("authority: " + e.getMessage(), where.get("authority"));
            }
        }
        Endpoint listen = endpoint(lines, values, where, "listen");
        String host = role == Role.AUTHORITY ? rsmap.alloc.Cluster.GLOBAL : values.getOrDefault("host", defaultHost);
        if (!Names.host(host)) {
            throw lines.error("host is a host name (letters, digits, '.', '-', '_'), not '" + ConfigText.printable(host) + "'",
                    where.getOrDefault("host", 0));
        }
        for (String user : List.of("admin_user", "daemon_user")) {
            if (values.containsKey(user) && !Names.user(values.get(user))) {
                throw lines.error(user + " is a user name, not '" + ConfigText.printable(values.get(user)) + "'", where.get(user));
            }
        }
        String realloc = values.getOrDefault("realloc", "on");
        if (!realloc.equals("on") && !realloc.equals("off")) {
            throw lines.error("realloc is on or off, not '" + ConfigText.printable(realloc) + "'", where.get("realloc"));
        }
        String policy = values.getOrDefault("realloc_policy", "fifo");
        if (rsmap.realloc.Policy.named(policy).isEmpty()) {
            throw lines.error("realloc_policy is fifo or smallest, not '" + ConfigText.printable(policy) + "'",
                    where.get("realloc_policy"));
        }
        MaxGrow maxGrow;
        try {
            maxGrow = MaxGrow.parse(values.getOrDefault("realloc_max_grow", "start"));
        } catch (IllegalArgumentException e) {
            throw lines.error("realloc_max_grow: " + e.getMessage(), where.get("realloc_max_grow"));
        }
        String discover = values.getOrDefault("discover", "on");
        if (!discover.equals("on") && !discover.equals("off")) {
            throw lines.error("discover is on or off, not '" + ConfigText.printable(discover) + "'", where.get("discover"));
        }
        AttributeTypes types = HostSettings.attributeTypes(lines, values, valueAt);
        Map<String, String> attributes = HostSettings.attributes(lines, values, valueAt, types);
        Optional<Filter> filter = Optional.empty();
        if (values.containsKey("filter")) {
            try {
                filter = Optional.of(Filter.parse(values.get("filter"), types, Limits.DEFAULT));
            } catch (ParseException e) {
                throw lines.error("filter: " + e.problem(), valueAt.get("filter") + e.offset());
            }
        }
        int slots = number(lines, values, where, "slots", -1, 0, 1_000_000);
        rsmap.place.Policy alternativesPolicy = HostSettings.alternativesPolicy(lines, values, where);
        return new Config(dir.resolve(values.get("complexes")), host,
                values.getOrDefault("complex_values", "NONE"), values.getOrDefault("global_complex_values", "NONE"),
                dir.resolve(values.getOrDefault("socket", "/run/rsmap/rsmapd.sock")),
                values.getOrDefault("socket_group", "rsmap"), socketMode(lines, values, where),
                dir.resolve(values.getOrDefault("state_dir", "/var/lib/rsmap")),
                backend, mode, values.containsKey("execd_spool") ? dir.resolve(values.get("execd_spool")) : null,
                values.getOrDefault("admin_user", "root"), values.getOrDefault("daemon_user", "root"),
                number(lines, values, where, "max_frame", FrameDecoder.DEFAULT_MAX_FRAME, 64, 64 << 20),
                number(lines, values, where, "max_rsmap_ids", Limits.DEFAULT_MAX_RSMAP_IDS, 0, 1 << 20),
                number(lines, values, where, "reconcile_interval", 60, 0, 86_400),
                number(lines, values, where, "max_connections_per_user", 32, 1, 100_000),
                number(lines, values, where, "idle_timeout", 300, 1, 86_400),
                number(lines, values, where, "frame_timeout", 10, 1, 3_600), realloc.equals("on"), policy,
                role, authority, listen, dir.resolve(values.getOrDefault("munge_socket", MUNGE_SOCKET.toString())),
                attributes, types, slots < 0 ? OptionalInt.empty() : OptionalInt.of(slots), filter, discover.equals("on"),
                alternativesPolicy, GpuSettings.parse(lines, values, where, dir), lineNumbers(text, values.keySet()),
                maxGrow, CdiSettings.parse(lines, values, where, dir),
                number(lines, values, where, "takeover_timeout", 10, 1, 3_600), HealthSettings.parse(lines, values, where, dir));
    }

    /** The same settings with {@code values} as complex_values (a map built from discovery added). */
    public Config withComplexValues(String values) {
        return new Config(complexes, host, values, globalComplexValues, socket, socketGroup, socketMode, stateDir,
                deviceBackend, isolation, execdSpool, adminUser, daemonUser, maxFrame, maxRsmapIds, reconcileInterval,
                maxConnectionsPerUser, idleTimeout, frameTimeout, realloc, reallocPolicy, role, authority, listen,
                mungeSocket, attributes, attributeTypes, slots, filter, discover, alternativesPolicy, gpus, lines,
                reallocMaxGrow, cdi, takeoverTimeout, health);
    }

    private static Endpoint endpoint(Continuation lines, Map<String, String> values, Map<String, Integer> where,
                                     String key) throws ParseException {
        if (!values.containsKey(key)) {
            return null;
        }
        try {
            return Endpoint.parse(values.get(key));
        } catch (IllegalArgumentException e) {
            throw lines.error(key + ": " + e.getMessage(), where.get(key));
        }
    }

    /** rw for the owner, and rw, r or nothing for group and others: never execute bits. */
    private static String socketMode(Continuation lines, Map<String, String> values, Map<String, Integer> where)
            throws ParseException {
        String v = values.getOrDefault("socket_mode", "0660");
        if (!v.matches("0?6[0246][0246]")) {
            throw lines.error("socket_mode is an octal mode like 0660 or 0666 (owner rw; no execute bits), not '" + v
                    + "'", where.get("socket_mode"));
        }
        String digits = v.length() == 4 ? v.substring(1) : v;
        StringBuilder rwx = new StringBuilder();
        for (char c : digits.toCharArray()) {
            int d = c - '0';
            rwx.append((d & 4) != 0 ? 'r' : '-').append((d & 2) != 0 ? 'w' : '-').append('-');
        }
        return rwx.toString();
    }

    /** The physical line where each key is set (continued lines count as the line they start on). */
    private static Map<String, Integer> lineNumbers(String text, Set<String> keys) {
        Map<String, Integer> out = new LinkedHashMap<>();
        String[] physical = text.split("\n", -1);
        boolean continued = false;
        for (int i = 0; i < physical.length; i++) {
            String line = physical[i].strip();
            if (!continued) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    String key = line.substring(0, eq).strip().toLowerCase(Locale.ROOT);
                    if (keys.contains(key)) {
                        out.putIfAbsent(key, i + 1);
                    }
                }
            }
            continued = line.endsWith("\\");
        }
        return Map.copyOf(out);
    }

    private static int number(Continuation lines, Map<String, String> values, Map<String, Integer> where, String key,
                              int dflt, int min, int max) throws ParseException {
        String v = values.get(key);
        if (v == null) {
            return dflt;
        }
        if (!v.matches("[0-9]{1,9}") || Integer.parseInt(v) < min || Integer.parseInt(v) > max) {
            throw lines.error(key + " is a whole number from " + min + " to " + max + ", not '" + v + "'", where.get(key));
        }
        return Integer.parseInt(v);
    }

    /** {@code socket_group} where /etc/group has it; "" otherwise (the socket keeps its group). */
    public String socketGroupIfPresent() {
        String group = socketGroup();
        try {
            Path p = Path.of("/etc/group");
            if (Files.isReadable(p) && Files.readAllLines(p).stream().anyMatch(l -> l.startsWith(group + ":"))) {
                return group;
            }
        } catch (IOException e) {
            // no group database: leave the socket's group as it is
        }
        return "";
    }
}
