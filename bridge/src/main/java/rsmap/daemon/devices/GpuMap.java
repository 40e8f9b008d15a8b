// The map of a host's NVIDIA GPUs from what NVML reports: built (one instance per card and share, the
// characteristics the complex table declares, devices=), checked where written by hand, named for the job.
package rsmap.daemon.devices;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.ParseException;
import rsmap.complex.Complex;
import rsmap.complex.ComplexTable;
import rsmap.complex.Value;
import rsmap.daemon.config.GpuSettings;
import rsmap.device.nvml.Gpu;
import rsmap.device.nvml.Inventory;
import rsmap.map.DeviceList;
import rsmap.map.Instance;
import rsmap.map.ResourceMap;

/**
 * docs/gpus.md, "Declare": each card becomes {@code gpu_shares} instances with the id {@code gpu_id} says
 * (its NVML index or its UUID) and the characteristics the complex table declares among {@link
 * #CHARACTERISTICS}, always with {@code devices=} of its node and the driver's shared nodes present under
 * {@code gpu_dev_dir}. A characteristic value holds no blank: a model's blanks (and any of {@code , [ ] = ( )})
 * are written as {@code _} ({@code NVIDIA A100-SXM4-80GB} is {@code NVIDIA_A100-SXM4-80GB}).
 */
public final class GpuMap {
    /** What a card's instance may carry, in this order, when the complex table declares it. */
    public static final List<String> CHARACTERISTICS = List.of("uuid", "model", "memory", "numa_node", "pci",
            "compute_capability");
    /** The driver's nodes every CUDA process opens, beside its card's (where present). */
    static final List<String> SHARED_NODES = List.of("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools");
    /** Suggested complex table lines for the characteristics (qconf -sc format). */
    private static final Map<String, String> TABLE_LINES = tableLines();

    private GpuMap() {
    }

    /** A model as a characteristic value holds it. */
    public static String model(String nvmlName) {
        return nvmlName.strip().replaceAll("[\\s,\\[\\]=()]", "_");
    }

    /** The value of characteristic {@code name} for {@code g}; empty where NVML said nothing of it. */
    public static Optional<String> value(String name, Gpu g) {
        switch (name) {
            case "uuid":
                return Optional.of(g.uuid());
            case "model":
                return Optional.of(model(g.model()));
            case "memory":
                return Optional.of(g.memoryMib() + "M");
            case "numa_node":
                return g.numaNode().isPresent() ? Optional.of(Integer.toString(g.numaNode().getAsInt())) : Optional.empty();
            case "pci":
                return Optional.of(g.pciBusId());
            case "compute_capability":
                return Optional.of(g.computeCapability());
            default:
                throw new IllegalArgumentException(name);
        }
    }

    /** The card's devices= value: its node and the shared nodes that exist under {@code devDir}, rw. */
    public static String devices(Gpu g, Path devDir) {
        List<String> out = new ArrayList<>();
        out.add(devDir.resolve("nvidia" + g.minor()) + ":rw");
        for (String shared : SHARED_NODES) {
            if (Files.exists(devDir.resolve(shared))) {
                out.add(devDir.resolve(shared) + ":rw");
            }
        }
        return String.join(";", out);
    }

    /** The characteristics {@code table} declares among {@link #CHARACTERISTICS} (as plain non-map complexes). */
    public static List<String> declared(ComplexTable table) {
        List<String> out = new ArrayList<>();
        for (String c : CHARACTERISTICS) {
            table.find(c).filter(x -> x.name().equals(c) && !x.isResourceMap()).ifPresent(x -> out.add(c));
        }
        return out;
    }

    /** The instance id of {@code g}. */
    public static String id(Gpu g, GpuSettings.Id id) {
        return id == GpuSettings.Id.UUID ? g.uuid() : Integer.toString(g.index());
    }

    /** {@code MAP=N(id[...] ...)}: the complex_values entry rsmapd builds for {@code inv}. */
    public static String entry(String map, Inventory inv, ComplexTable table, int shares, GpuSettings.Id id,
                               Path devDir) {
        List<String> names = declared(table);
        boolean devices = table.find(DeviceList.CHARACTERISTIC).isPresent();
        List<String> instances = new ArrayList<>();
        for (Gpu g : inv.gpus()) {
            List<String> block = new ArrayList<>();
            if (devices) {
                block.add(DeviceList.CHARACTERISTIC + "=" + devices(g, devDir));
            }
            for (String n : names) {
                value(n, g).ifPresent(v -> block.add(n + "=" + v));
            }
            String one = id(g, id) + (block.isEmpty() ? "" : "[" + String.join(",", block) + "]");
            for (int i = 0; i < shares; i++) {
                instances.add(one);
            }
        }
        return map + "=" + instances.size() + "(" + String.join(" ", instances) + ")";
    }

    /** The complex table lines of the characteristics a GPU map can carry (the table's own where declared). */
    public static List<String> tableLines(ComplexTable table) {
        List<String> out = new ArrayList<>();
        for (String c : CHARACTERISTICS) {
            out.add(table.find(c).map(Complex::toString).orElse(TABLE_LINES.get(c)));
        }
        return out;
    }

    /**
     * What is wrong with a hand-written {@code map} against {@code inv}: one line per instance that matches
     * no card (its {@code /dev/nvidiaN} under {@code devDir}), or declares a uuid, model or memory its card
     * does not have, each saying what the card really is. Shares of one id are checked once.
     */
    public static List<String> check(ResourceMap map, Inventory inv, Path devDir) {
        List<String> out = new ArrayList<>();
        Map<String, Instance> once = new LinkedHashMap<>();
        map.instances().forEach(i -> once.putIfAbsent(i.id(), i));
        for (Instance i : once.values()) {
            String head = map.name() + " instance " + i.id() + ": ";
            Optional<Integer> minor = minor(i, devDir);
            if (minor.isEmpty()) {
                out.add(head + "its devices= names no " + devDir.resolve("nvidiaN") + " (cards: " + cards(inv) + ")");
                continue;
            }
            Optional<Gpu> card = inv.gpus().stream().filter(g -> g.minor() == minor.get()).findFirst();
            if (card.isEmpty()) {
                out.add(head + "devices= names " + devDir.resolve("nvidia" + minor.get()) + ", but no card has minor "
                        + minor.get() + " (cards: " + cards(inv) + ")");
                continue;
            }
            Gpu g = card.get();
            List<String> wrong = new ArrayList<>();
            for (String name : List.of("uuid", "model", "memory")) {
                Optional<Value> declared = i.characteristics().get(name);
                if (declared.isPresent() && !same(name, declared.get(), g)) {
                    wrong.add(name + "=" + declared.get().text());
                }
            }
            if (!wrong.isEmpty()) {
                out.add(head + String.join(", ", wrong) + ", but " + devDir.resolve("nvidia" + g.minor()) + " is "
                        + describe(g));
            }
        }
        return out;
    }

    /** What a card is, in an error line. */
    static String describe(Gpu g) {
        return "card " + g.index() + " (uuid=" + g.uuid() + ", model=" + model(g.model()) + ", memory=" + g.memoryMib()
                + "M, minor " + g.minor() + ")";
    }

    private static String cards(Inventory inv) {
        if (inv.gpus().isEmpty()) {
            return "none";
        }
        List<String> out = new ArrayList<>();
        inv.gpus().forEach(g -> out.add(describe(g)));
        return String.join("; ", out);
    }

    private static boolean same(String name, Value declared, Gpu g) {
        String real = value(name, g).orElseThrow();
        if (name.equals("memory")) {
            // Within 5% of the card's total: a driver reports a little less or more than the marketed size (an
            // H100 80GB reports 81559 MiB), and admins write the marketed one (memory=80G).
            try {
                double r = Value.parse(declared.type(), real).number();
                return Math.abs(declared.number() - r) <= 0.05 * r;
            } catch (ParseException | RuntimeException e) {
                return false;
            }
        }
        return name.equals("model") ? model(declared.text()).equalsIgnoreCase(real) : declared.text().equals(real);
    }

    /** N of the instance's /dev/nvidiaN (under devDir) in its devices=, if any. */
    static Optional<Integer> minor(Instance i, Path devDir) {
        Optional<Value> devices = i.characteristics().get(DeviceList.CHARACTERISTIC);
        if (devices.isEmpty()) {
            return Optional.empty();
        }
        try {
            for (DeviceList.Device d : DeviceList.parse(devices.get().text()).devices()) {
                Path p = Path.of(d.path());
                String file = p.getFileName() == null ? "" : p.getFileName().toString();
                if (devDir.equals(p.getParent()) && file.matches("nvidia(0|[1-9][0-9]{0,5})")) {
                    return Optional.of(Integer.parseInt(file.substring(6)));
                }
            }
        } catch (ParseException e) {
            return Optional.empty(); // read when the host was read: cannot happen for a parsed map
        }
        return Optional.empty();
    }

    private static Map<String, String> tableLines() {
        Map<String, String> t = new LinkedHashMap<>();
        t.put("uuid", "uuid                uuid       STRING      ==    YES         NO         NONE     0");
        t.put("model", "model               model      CSTRING     ==    YES         NO         NONE     0");
        t.put("memory", "memory              gmem       MEMORY      <=    YES         NO         0        0");
        t.put("numa_node", "numa_node           numa       INT         ==    YES         NO         0        0");
        t.put("pci", "pci                 pci        STRING      ==    YES         NO         NONE     0");
        t.put("compute_capability", "compute_capability  cc         DOUBLE      <=    YES         NO         0        0");
        return t;
    }
}
