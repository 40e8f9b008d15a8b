// A Container Device Interface spec (CDI, cdiVersion 0.5.0): one kind and its devices, each with the device
// nodes and the environment a container gets; what rsmapd writes per job and `rsmap cdi-spec` prints.
package rsmap.cdi;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.ParseException;
import rsmap.device.DevicePolicy;
import rsmap.device.DeviceRule;
import rsmap.map.DeviceList;
import rsmap.map.Instance;

/**
 * <pre>
 * {"cdiVersion":"0.5.0","kind":"rsmap.io/job","devices":[{"name":"4711.3","containerEdits":{
 *   "env":["SGE_HGR_gpu=1"],
 *   "deviceNodes":[{"path":"/dev/nvidia1","type":"c","major":195,"minor":1,"permissions":"rw"}]}}]}
 * </pre>
 * 0.5.0 is the lowest version that has everything written here and the highest podman 4.3 (Debian 12)
 * reads; every newer runtime reads it too. Names follow the CDI project's own rules
 * (pkg/cdi/qualified-device.go): a vendor {@code rsmap.io}, a class starting with a letter, a device name of
 * letters, digits and {@code _ . : -} beginning and ending with a letter or digit.
 *
 * @param kind    {@code rsmap.io/CLASS}
 * @param devices in the order given
 */
public record CdiSpec(String kind, List<Device> devices) {
    public static final String VERSION = "0.5.0";
    public static final String VENDOR = "rsmap.io";
    /** The class of the per-job specs: a job's device is {@code rsmap.io/job=NAME}. */
    public static final String JOB_CLASS = "job";
    private static final ObjectMapper JSON = new ObjectMapper();

    public CdiSpec {
        devices = List.copyOf(devices);
        String cls = kind.startsWith(VENDOR + "/") ? kind.substring(VENDOR.length() + 1) : "";
        if (!isClass(cls)) {
            throw new IllegalArgumentException("not a CDI kind of " + VENDOR + ": " + kind);
        }
    }

    /** One device of a spec: its name, the device nodes and the variables a container gets. */
    public record Device(String name, List<DeviceRule> nodes, List<String> env) {
        public Device {
            nodes = List.copyOf(nodes);
            env = List.copyOf(env);
            if (!isName(name)) {
                throw new IllegalArgumentException("not a CDI device name: " + name);
            }
        }
    }

    /** The device nodes behind some instances' {@code devices=}, and the paths that name no device here. */
    public record Nodes(List<DeviceRule> found, List<String> missing) {
        public Nodes {
            found = List.copyOf(found);
            missing = List.copyOf(missing);
        }
    }

    /** Why {@code name} cannot be a CDI class (a map's name: {@code rsmap.io/<map>}); empty when it can. */
    public static Optional<String> classProblem(String name) {
        return isClass(name) ? Optional.empty() : Optional.of("'" + name + "' is no CDI class (a letter, "
                + "then letters, digits, '_' or '-', ending with a letter or digit)");
    }

    /** Why {@code name} cannot be a CDI device name (an instance id); empty when it can. */
    public static Optional<String> nameProblem(String name) {
        return isName(name) ? Optional.empty() : Optional.of("'" + name + "' is no CDI device name "
                + "(letters, digits, '_', '.', ':' or '-', beginning and ending with a letter or digit)");
    }

    /**
     * A CDI class, {@code [A-Za-z]([A-Za-z0-9_-]*[A-Za-z0-9])?}, checked without a regular expression: a job
     * start with devices writes a spec, and under full tiered compilation a matcher is a large compile.
     */
    static boolean isClass(String s) {
        int n = s.length();
        if (n == 0 || !letter(s.charAt(0)) || !alnum(s.charAt(n - 1))) {
            return false;
        }
        for (int i = 1; i < n - 1; i++) {
            char c = s.charAt(i);
            if (!(alnum(c) || c == '_' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    /** A CDI device name, {@code [A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?}. */
    static boolean isName(String s) {
        int n = s.length();
        if (n == 0 || !alnum(s.charAt(0)) || !alnum(s.charAt(n - 1))) {
            return false;
        }
        for (int i = 1; i < n - 1; i++) {
            char c = s.charAt(i);
            if (!(alnum(c) || c == '_' || c == '.' || c == ':' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    private static boolean letter(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    private static boolean alnum(char c) {
        return letter(c) || (c >= '0' && c <= '9');
    }

    /**
     * The device name of a job (docs/containers.md, "The device name"): the job id with {@code +} written
     * {@code :}, then {@code .TASK} for an array task; a name that would begin with {@code _} or {@code -} gets
     * {@code x.} before it, one that would end so {@code .x} after it. Job ids hold no {@code .} or {@code :},
     * so two jobs never share a name.
     */
    public static String jobDeviceName(String job, String task) {
        String name = job.replace('+', ':') + (task.isEmpty() ? "" : "." + task);
        if (!Character.isLetterOrDigit(name.charAt(0))) {
            name = "x." + name;
        }
        if (!Character.isLetterOrDigit(name.charAt(name.length() - 1))) {
            name = name + ".x";
        }
        return name;
    }

    /**
     * The device nodes of {@code instances}' {@code devices=} in the order they are listed, each path once
     * with its widest mode, resolved to type and number as the device policy resolves them (symlinks
     * followed). The permissions are the {@code devices=} mode ({@code r}, {@code w}, {@code rw}): never
     * {@code m}, as {@code devices=} has no mknod mode.
     */
    public static Nodes nodes(List<Instance> instances) {
        List<String> values = new ArrayList<>();
        instances.forEach(i -> i.characteristics().get(DeviceList.CHARACTERISTIC).ifPresent(v -> values.add(v.text())));
        return nodesOf(values);
    }

    /** The same for {@code devices=} values as text (QUERY's instances), each already accepted by rsmapd. */
    public static Nodes nodesOf(List<String> values) {
        Map<String, DeviceList.Mode> paths = new LinkedHashMap<>();
        for (String v : values) {
            try {
                DeviceList.parse(v).devices().forEach(d -> paths.merge(d.path(), d.mode(), DeviceList.Mode::widen));
            } catch (ParseException e) {
                throw new IllegalStateException("devices=" + v + " was accepted when read: " + e.getMessage(), e);
            }
        }
        List<DeviceRule> found = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        paths.forEach((p, mode) -> DevicePolicy.resolve(p, mode).ifPresentOrElse(found::add, () -> missing.add(p)));
        return new Nodes(found, missing);
    }

    /** Whether any of {@code instances} lists devices: then a job holding them has a spec. */
    public static boolean listsDevices(List<Instance> instances) {
        return instances.stream().anyMatch(i -> i.characteristics().get(DeviceList.CHARACTERISTIC).isPresent());
    }

    /** The spec as the CDI schema has it. */
    public ObjectNode json() {
        ObjectNode spec = JSON.createObjectNode().put("cdiVersion", VERSION).put("kind", kind);
        ArrayNode out = spec.putArray("devices");
        for (Device d : devices) {
            ObjectNode edits = out.addObject().put("name", d.name()).putObject("containerEdits");
            if (!d.env().isEmpty()) {
                ArrayNode env = edits.putArray("env");
                d.env().forEach(env::add);
            }
            ArrayNode nodes = edits.putArray("deviceNodes");
            for (DeviceRule r : d.nodes()) {
                nodes.addObject().put("path", r.path()).put("type", String.valueOf(r.type())).put("major", r.major())
                        .put("minor", r.minor()).put("permissions", r.mode().toString());
            }
        }
        return spec;
    }

    /** The file's content: the JSON, indented, with a final newline. */
    public String text() {
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(json()) + "\n";
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
