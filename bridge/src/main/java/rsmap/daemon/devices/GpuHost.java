// An execution host's NVIDIA GPUs (docs/gpus.md): NVML read at start and at RELOAD, gpu_map built from it
// or checked against it, the host's GPU attributes and facts, and the variable naming a job's cards.
package rsmap.daemon.devices;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.ConfigText;
import rsmap.daemon.config.GpuSettings;
import rsmap.device.nvml.Gpu;
import rsmap.device.nvml.Inventory;
import rsmap.device.nvml.Nvml;
import rsmap.device.nvml.NvmlException;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.map.ComplexValues;
import rsmap.map.ResourceMap;

/**
 * Built once per configuration read (start, RELOAD). NVML absent and no gpu_map: nothing discovered, the
 * host works as before. A gpu_map that complex_values does not write is built from NVML, or the start
 * (RELOAD) is refused naming the file, gpu_map's line and why; one written by hand is checked (gpu_check).
 * The allocation core sees the built map as any other complex_values entry.
 */
public final class GpuHost {
    /** No GPU layer: an authority's, or a host without NVML and gpu_map. */
    static final GpuHost NONE = new GpuHost(GpuSettings.defaults(), Optional.empty(), "nvml_library = off", false);

    private final GpuSettings settings;
    private final Optional<Inventory> inventory;
    /** Why there is no inventory (for a configuration that needs one). */
    private final String missing;
    /** Whether gpu_map was built from the inventory (only then a job is told its cards' UUIDs). */
    private final boolean built;
    /** The card index of the map rsmapd built (the GPU variable's), NONE when it built none. */
    private final CardIndex builtIndex;
    /** The last card index asked for ({@link #cards}), and the configured values it was made over. */
    private CardIndex index = CardIndex.NONE;
    private ComplexValues indexed;

    private GpuHost(GpuSettings settings, Optional<Inventory> inventory, String missing, boolean built) {
        this.settings = settings;
        this.inventory = inventory;
        this.missing = missing;
        this.built = built;
        this.builtIndex = built && inventory.isPresent() ? CardIndex.built(inventory.get(), settings) : CardIndex.NONE;
    }

    /**
     * Which instance of {@code values}' gpu_map is which card ({@link CardIndex}), made once per configuration
     * (start, RELOAD); NONE without gpu_map or NVML. Health, MIG and explain ask it.
     */
    public synchronized CardIndex cards(ComplexValues values) {
        if (values == null || settings.gpuMap().isEmpty() || inventory.isEmpty()) {
            return CardIndex.NONE;
        }
        if (values != indexed) {
            index = values.resourceMap(settings.gpuMap().get()).map(m -> CardIndex.of(inventory.get(), settings, m))
                    .orElse(CardIndex.NONE);
            indexed = values;
        }
        return index;
    }

    /** What NVML says now, with the settings of {@code config}; its failure is kept for {@link #fill} to tell. */
    static GpuHost discover(Config config, LogBook log) {
        GpuSettings s = config.gpus();
        if (s.nvmlLibrary().isEmpty()) {
            return new GpuHost(s, Optional.empty(), "nvml_library = off", false);
        }
        try {
            Inventory inv = Nvml.load(s.nvmlLibrary().get(), Nvml.PCI_DEVICES).discover();
            inv.unread().forEach(line -> log.note(Log.Level.WARNING, "NVML: " + line));
            log.note(Log.Level.INFO, "NVML: driver " + inv.driver() + ", cuda " + inv.cuda() + ", " + inv.gpus().size()
                    + " gpus");
            return new GpuHost(s, Optional.of(inv), "", false);
        } catch (NvmlException e) {
            // Not logged: fill() says it where a configuration needs NVML; elsewhere there is nothing to say.
            return new GpuHost(s, Optional.empty(), e.getMessage(), false);
        }
    }

    /**
     * {@code config} with gpu_map built into its complex_values where they have no entry for it, or
     * checked where they do. Refused (one line per problem, each naming {@code file} and the line):
     * a gpu_map that is not a resource map, a map to build without NVML, and with gpu_check = strict a
     * hand-written map NVML cannot check or that is not the hardware. complex_values that do not parse
     * are left to Preflight, which says where.
     */
    Filled fill(Config config, ComplexTable table, Path file, LogBook log) throws IOException {
        Filled same = new Filled(config, this);
        if (settings.gpuMap().isEmpty()) {
            return same;
        }
        String map = settings.gpuMap().get();
        if (table.find(map).filter(c -> c.name().equals(map) && c.isResourceMap()).isEmpty()) {
            throw new IOException(ConfigText.where(config, file, "gpu_map") + ": '" + map + "' is not a resource map (type RSMAP)"
                    + " of the complex table " + config.complexes());
        }
        ComplexValues values;
        try {
            values = ComplexValues.parse(config.complexValues(), table,
                    Limits.DEFAULT.withMaxRsmapIds(config.maxRsmapIds()));
        } catch (ParseException e) {
            return same;
        }
        Optional<ResourceMap> written = values.resourceMap(map);
        if (written.isPresent()) {
            checkWritten(written.get(), config, file, log);
            return new Filled(config, this, Optional.of(values));
        }
        if (inventory.isEmpty()) {
            throw new IOException(ConfigText.where(config, file, "gpu_map") + ": complex_values has no entry for " + map
                    + ", which is built from NVML, and there is none: " + missing);
        }
        Inventory inv = inventory.get();
        String entry = GpuMap.entry(map, inv, table, settings.shares(), settings.id(), settings.devDir());
        String text = config.complexValues().strip();
        return new Filled(config.withComplexValues(text.equalsIgnoreCase("NONE") || text.isEmpty() ? entry
                : text + "," + entry), new GpuHost(settings, inventory, missing, true), Optional.of(values));
    }

    /**
     * A configuration with gpu_map built in (or as it was), and the GPU layer that goes with it; {@code written}: the
     * admin's complex_values as read here (empty where they were not), so that the next reader (MIG's) need not
     * parse the same text again.
     */
    public record Filled(Config config, GpuHost gpus, Optional<ComplexValues> written) {
        public Filled(Config config, GpuHost gpus) {
            this(config, gpus, Optional.empty());
        }
    }

    /** How a configuration gets its GPUs: chosen with the daemon's role, used at start and by RELOAD. */
    public interface Reader {
        Filled read(Config config) throws IOException;

        /** An authority's: no GPUs. */
        Reader NONE = config -> new Filled(config, GpuHost.NONE);

        /** A host's: NVML read now, gpu_map built or checked (errors name {@code file}). */
        static Reader host(ComplexTable table, Path file, LogBook log) {
            return config -> discover(config, log).fill(config, table, file, log);
        }
    }

    private void checkWritten(ResourceMap written, Config config, Path file, LogBook log) throws IOException {
        String at = ConfigText.where(config, file, "complex_values");
        List<String> problems = new ArrayList<>();
        if (inventory.isEmpty()) {
            problems.add(at + ": gpu_map " + written.name() + " cannot be checked against the hardware: " + missing);
        } else {
            GpuMap.check(written, inventory.get(), settings.devDir()).forEach(p -> problems.add(at + ": " + p));
        }
        if (problems.isEmpty()) {
            return;
        }
        if (settings.strict()) {
            throw new IOException(String.join("\n", problems) + "\n" + ConfigText.where(config, file, "gpu_check")
                    + ": strict refuses a gpu_map that is not the hardware (gpu_check = warn logs and starts)");
        }
        problems.forEach(p -> log.note(Log.Level.WARNING, p + " (gpu_check = warn)"));
    }


    /** What NVML reported, if it was read. */
    Optional<Inventory> inventory() {
        return inventory;
    }

    /**
     * A job's environment: its SGE_HGR_* ({@code hgr}) and, for a built gpu_map with gpu_env on, the
     * variable with the UUIDs of its cards, each once, in grant order - empty for a job granted none, so
     * that a job never names a card it was not granted (as Flux's gpubind hides every GPU then).
     */
    Map<String, String> environment(Map<String, String> hgr) {
        if (!built || settings.env().isEmpty()) {
            return hgr;
        }
        Map<String, String> out = new LinkedHashMap<>(hgr);
        String ids = hgr.getOrDefault("SGE_HGR_" + settings.gpuMap().orElseThrow(), "").strip();
        List<String> granted = ids.isEmpty() ? List.of() : Arrays.asList(ids.split(" +"));
        out.put(settings.env().get(), String.join(",", builtIndex.uuids(granted)));
        return out;
    }

    /** The host attributes for node filters (docs/filters.md): empty without NVML. */
    public Map<String, String> attributes() {
        Map<String, String> out = new LinkedHashMap<>();
        inventory.ifPresent(inv -> {
            out.put("gpus", Integer.toString(inv.gpus().size()));
            if (!inv.gpus().isEmpty()) {
                Gpu first = inv.gpus().get(0);
                out.put("gpu_model", first.model());
                out.put("gpu_memory", first.memoryMib() + "M");
            }
            out.put("nvidia_driver", inv.driver());
            out.put("cuda", inv.cuda());
        });
        return out;
    }

    /** {driver, cuda, gpus: [{index, uuid, model, memory, numa_node, pci, compute_capability, minor}]}, or null. */
    com.fasterxml.jackson.databind.node.ObjectNode facts() {
        if (inventory.isEmpty()) {
            return null;
        }
        return facts(inventory.get());
    }

    /** The facts of {@code inv} as QUERY, MODEL_DEF, REGISTER and rsmap discover show them. */
    static com.fasterxml.jackson.databind.node.ObjectNode facts(Inventory inv) {
        var n = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        n.put("driver", inv.driver()).put("cuda", inv.cuda());
        var gpus = n.putArray("gpus");
        for (Gpu g : inv.gpus()) {
            var o = gpus.addObject().put("index", g.index()).put("uuid", g.uuid()).put("model", g.model())
                    .put("memory", g.memoryMib() + "M");
            if (g.numaNode().isPresent()) {
                o.put("numa_node", g.numaNode().getAsInt());
            } else {
                o.putNull("numa_node");
            }
            o.put("pci", g.pciBusId()).put("compute_capability", g.computeCapability()).put("minor", g.minor());
        }
        return n;
    }
}
