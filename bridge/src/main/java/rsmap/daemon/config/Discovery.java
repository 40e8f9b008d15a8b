// The host attributes rsmapd reads from the machine itself: arch, kernel, os, cpus, cpu_speed,
// memory, each from one file of /proc, /sys or /etc, under a root that tests point at fake files.
package rsmap.daemon.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import rsmap.ParseException;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.node.AttributeTypes;

/**
 * Where each attribute comes from (docs/filters.md, "On the host"):
 *
 * <pre>
 * arch       /proc/sys/kernel/arch (what uname -m says), else the JVM's os.arch in the kernel's names
 * kernel     /proc/sys/kernel/osrelease                           e.g. 6.5.0-14-generic  (version)
 * os         ID= of /etc/os-release, else /proc/sys/kernel/ostype in lower case (linux)
 * cpus       /sys/devices/system/cpu/online (a CPU list, 0-63), else the JVM's available processors
 * cpu_speed  /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq (kHz), else the highest "cpu MHz" of
 *            /proc/cpuinfo; written in MHz, e.g. 2400MHz
 * memory     MemTotal of /proc/meminfo, written in whole MiB, e.g. 64215M (G and M are powers of 1024)
 * </pre>
 *
 * A source that is missing or unreadable leaves its attribute out and says so once in {@link
 * Result#problems()}: a host that cannot tell its CPU speed still runs jobs; filters that need the value
 * fail on it (docs/filters.md: a comparison that cannot be made is false), which is the safe side.
 */
public final class Discovery {
    /** The types of the discovered attributes, unless rsmapd.conf's attribute_types declares them otherwise. */
    static final Map<String, String> TYPES = typesInOrder();

    private final Path root;
    private final Optional<String> jvmArch;
    private final OptionalInt jvmProcessors;

    /**
     * @param root          where /proc, /sys and /etc are ({@code /} on a host)
     * @param jvmArch       the fallback for arch (os.arch), empty for none
     * @param jvmProcessors the fallback for cpus, empty for none
     */
    public Discovery(Path root, Optional<String> jvmArch, OptionalInt jvmProcessors) {
        this.root = root;
        this.jvmArch = jvmArch;
        this.jvmProcessors = jvmProcessors;
    }

    /** This machine's. */
    public static Discovery system() {
        return new Discovery(Path.of("/"), Optional.ofNullable(System.getProperty("os.arch")),
                OptionalInt.of(Runtime.getRuntime().availableProcessors()));
    }

    /** The attributes found, in the order above, and one line per attribute left out. */
    /** This host's attributes and slot capacity as the daemon uses them. */
    public record Described(rsmap.node.NodeAttributes attributes, OptionalInt slots) {
    }

    /**
     * The attributes from what {@code found} discovered (when discover = on) with the configured ones
     * over them, and the slots: rsmapd.conf's, else the discovered cpus. A discovered value its declared
     * type does not read (an admin declared kernel a number) is left out, logged; a configured one was
     * checked when the file was read.
     */
    public static Described describe(Config config, Result found, rsmap.Limits limits, LogBook log) throws ParseException {
        Map<String, String> text = new LinkedHashMap<>();
        if (config.discover()) {
            found.problems().forEach(p -> log.note(Log.Level.WARNING, p));
            for (Map.Entry<String, String> e : found.attributes().entrySet()) {
                try {
                    rsmap.node.NodeAttributes.parse(Map.of(e.getKey(), e.getValue()), config.attributeTypes(), limits);
                    text.put(e.getKey(), e.getValue());
                } catch (ParseException x) {
                    log.note(Log.Level.WARNING, "attribute " + e.getKey() + " not discovered: " + x.problem());
                }
            }
        }
        text.putAll(config.attributes());
        rsmap.node.NodeAttributes attributes = rsmap.node.NodeAttributes.parse(text, config.attributeTypes(), limits);
        OptionalInt slots = config.slots();
        if (slots.isEmpty() && attributes.get("cpus").orElse(null) instanceof rsmap.node.Quantity q) {
            double cpus = q.value();
            if (cpus >= 0 && cpus <= 1_000_000 && cpus == Math.rint(cpus)) {
                slots = OptionalInt.of((int) cpus);
            }
        }
        if (!attributes.values().isEmpty()) {
            log.note(Log.Level.INFO, "host " + config.host() + " attributes " + attributes.text() + (slots.isPresent()
                    ? " slots=" + slots.getAsInt() : ""));
        }
        return new Described(attributes, slots);
    }

    public record Result(Map<String, String> attributes, List<String> problems) {
        public Result {
            attributes = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(attributes));
            problems = List.copyOf(problems);
        }
    }

    /** The declared types of the discovered attributes, as attribute_types reads them. */
    static AttributeTypes types() {
        try {
            return AttributeTypes.of(TYPES);
        } catch (ParseException e) {
            throw new IllegalStateException("the built-in types are valid", e);
        }
    }

    public Result discover() {
        Map<String, String> out = new LinkedHashMap<>();
        List<String> problems = new ArrayList<>();
        for (String name : READ) {
            try {
                out.put(name, read(name));
            } catch (IOException | RuntimeException e) {
                problems.add("attribute " + name + " not discovered: " + e.getMessage());
            }
        }
        return new Result(out, problems);
    }

    private String read(String name) throws IOException {
        switch (name) {
            case "arch":
                return arch();
            case "kernel":
                return firstLine("proc/sys/kernel/osrelease");
            case "os":
                return os();
            case "cpus":
                return cpus();
            case "cpu_speed":
                return cpuSpeed();
            case "memory":
                return memory();
            default:
                throw new AssertionError(name);
        }
    }

    private String arch() throws IOException {
        try {
            return firstLine("proc/sys/kernel/arch");
        } catch (IOException e) {
            if (jvmArch.isEmpty() || jvmArch.get().isBlank()) {
                throw e;
            }
            // The JVM's names where they differ from the kernel's (uname -m).
            switch (jvmArch.get()) {
                case "amd64":
                    return "x86_64";
                case "x86":
                case "i386":
                    return "i686";
                default:
                    return jvmArch.get();
            }
        }
    }

    private String os() throws IOException {
        Path release = root.resolve("etc/os-release");
        if (Files.isRegularFile(release)) {
            for (String line : lines("etc/os-release")) {
                if (line.startsWith("ID=")) {
                    String id = line.substring(3).strip().replaceAll("^[\"']|[\"']$", "");
                    if (!id.isEmpty()) {
                        return id;
                    }
                }
            }
        }
        try {
            return firstLine("proc/sys/kernel/ostype").toLowerCase(Locale.ROOT);
        } catch (IOException e) {
            throw new IOException("no ID= in " + release + ", and " + e.getMessage(), e);
        }
    }

    /** A CPU list as the kernel writes it (0-3,8-11), counted. */
    private String cpus() throws IOException {
        String rel = "sys/devices/system/cpu/online";
        String list;
        try {
            list = firstLine(rel);
        } catch (IOException e) {
            if (jvmProcessors.isEmpty()) {
                throw e;
            }
            return Integer.toString(jvmProcessors.getAsInt());
        }
        long count = 0;
        for (String part : list.split(",")) {
            String[] range = part.strip().split("-", -1);
            try {
                long from = Long.parseLong(range[0]);
                long to = range.length == 2 ? Long.parseLong(range[1]) : from;
                if (range.length > 2 || to < from) {
                    throw new NumberFormatException();
                }
                count += to - from + 1;
            } catch (NumberFormatException e) {
                throw new IOException(root.resolve(rel) + ": not a CPU list: '" + ConfigText.printable(list) + "'", e);
            }
        }
        return Long.toString(count);
    }

    private String cpuSpeed() throws IOException {
        String freq = "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq";
        if (Files.isRegularFile(root.resolve(freq))) {
            String khz = firstLine(freq);
            if (khz.matches("[0-9]{1,15}") && Long.parseLong(khz) > 0) {
                return Long.parseLong(khz) / 1000 + "MHz";
            }
        }
        double max = 0;
        for (String line : lines("proc/cpuinfo")) {
            int colon = line.indexOf(':');
            if (line.startsWith("cpu MHz") && colon > 0) {
                try {
                    max = Math.max(max, Double.parseDouble(line.substring(colon + 1).strip()));
                } catch (NumberFormatException e) {
                    // a line of another form: the others may still say
                }
            }
        }
        if (max <= 0) {
            throw new IOException(root.resolve("proc/cpuinfo") + ": no \"cpu MHz\" line (and no " + root.resolve(freq)
                    + ")");
        }
        return Math.round(max) + "MHz";
    }

    private String memory() throws IOException {
        for (String line : lines("proc/meminfo")) {
            if (line.startsWith("MemTotal:")) {
                String[] f = line.substring(9).strip().split("\\s+");
                if (f.length == 2 && f[0].matches("[0-9]{1,15}") && f[1].equals("kB")) {
                    return Long.parseLong(f[0]) / 1024 + "M";
                }
                throw new IOException(root.resolve("proc/meminfo") + ": MemTotal is not 'N kB': '"
                        + ConfigText.printable(line) + "'");
            }
        }
        throw new IOException(root.resolve("proc/meminfo") + ": no MemTotal line");
    }

    private String firstLine(String rel) throws IOException {
        List<String> lines = lines(rel);
        String first = lines.isEmpty() ? "" : lines.get(0).strip();
        if (first.isEmpty()) {
            throw new IOException(root.resolve(rel) + ": empty");
        }
        return first;
    }

    /** The file's lines; a missing file says so in one line, as does any other failure to read it. */
    private List<String> lines(String rel) throws IOException {
        Path p = root.resolve(rel);
        try {
            byte[] bytes;
            try (var in = Files.newInputStream(p)) {
                bytes = in.readNBytes(1 << 20); // /proc/cpuinfo of a large host is some 100 kB
            }
            return new String(bytes, StandardCharsets.UTF_8).lines().toList();
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IOException(p + ": no such file", e);
        } catch (IOException e) {
            throw new IOException(p + ": " + e.getMessage(), e);
        }
    }

    /** The attributes read here; the GPU ones come from NVML (GpuHost). */
    private static final List<String> READ = List.of("arch", "kernel", "os", "cpus", "cpu_speed", "memory");

    private static Map<String, String> typesInOrder() {
        Map<String, String> t = new LinkedHashMap<>();
        t.put("arch", "string");
        t.put("kernel", "version");
        t.put("os", "string");
        t.put("cpus", "number");
        t.put("cpu_speed", "number");
        t.put("memory", "number");
        // From NVML where the host has it (docs/gpus.md): the first card's model and memory.
        t.put("gpus", "number");
        t.put("gpu_model", "string");
        t.put("gpu_memory", "number");
        t.put("nvidia_driver", "version");
        t.put("cuda", "version");
        return java.util.Collections.unmodifiableMap(t);
    }
}
