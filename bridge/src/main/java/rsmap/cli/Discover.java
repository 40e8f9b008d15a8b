// rsmap discover: what NVML reports of this host's NVIDIA GPUs, the complex table lines for their
// characteristics, and the complex_values entry rsmapd would build from them (docs/gpus.md, "Discover").
package rsmap.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Config;
import rsmap.daemon.devices.GpuMap;
import rsmap.daemon.config.GpuSettings;
import rsmap.device.nvml.Gpu;
import rsmap.device.nvml.Inventory;
import rsmap.device.nvml.Nvml;
import rsmap.device.nvml.NvmlException;

/**
 * The settings come from rsmapd.conf where it exists (nvml_library, gpu_map, gpu_shares, gpu_id,
 * gpu_dev_dir, and the complex table, whose declared characteristics a built map carries); the options
 * override them. Without a configuration every characteristic is shown, and the map is named {@code gpu}.
 * No NVML: exit 2 naming why (the call and NVML's text, or the loader's reason).
 */
@Command(name = "discover", mixinStandardHelpOptions = true, description = "Show this host's NVIDIA GPUs as NVML "
        + "reports them, the complex table lines for their characteristics, and the complex_values entry rsmapd "
        + "builds for gpu_map (docs/gpus.md).")
final class Discover implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE", description = "rsmapd's configuration (default: "
            + "/etc/rsmap/rsmapd.conf, where it exists).")
    Path config;

    @Option(names = "--nvml-library", paramLabel = "PATH", description = "NVML to load (default: nvml_library, "
            + "else libnvidia-ml.so.1 from the dynamic loader).")
    String library;

    @Option(names = "--shares", paramLabel = "N", description = "Instances per card (default: gpu_shares, else 1).")
    Integer shares;

    @Option(names = "--id", paramLabel = "index|uuid", description = "Instance ids: the NVML index or the card's UUID "
            + "(default: gpu_id, else index).")
    String id;

    @Option(names = "--json", description = "One JSON object: driver, cuda, gpus, complex_values.")
    boolean json;

    @Override
    public Integer call() throws Refused {
        Path file = config != null ? config : Path.of("/etc/rsmap/rsmapd.conf");
        GpuSettings s = GpuSettings.defaults();
        Optional<ComplexTable> table = Optional.empty();
        if (config != null || Files.isRegularFile(file)) {
            Config c;
            try {
                c = Config.parse(Inputs.text(file, Limits.DEFAULT), file, "localhost");
            } catch (ParseException e) {
                throw new Refused(file + ": " + e.lineAndColumn() + ": " + e.problem());
            }
            s = c.gpus();
            table = Optional.of(Inputs.complexes(c.complexes(), Limits.DEFAULT));
        }
        if (shares != null && (shares < 1 || shares > 64)) {
            throw new Refused("--shares is a whole number from 1 to 64, not " + shares);
        }
        if (id != null && !id.equals("index") && !id.equals("uuid")) {
            throw new Refused("--id is index or uuid, not '" + id + "'");
        }
        String lib = library != null ? library : s.nvmlLibrary().orElseThrow(() -> new Refused(file
                + ": nvml_library = off: rsmapd reads no NVML here (--nvml-library PATH to read one anyway)"));
        int n = shares != null ? shares : s.shares();
        GpuSettings.Id ids = id != null ? (id.equals("uuid") ? GpuSettings.Id.UUID : GpuSettings.Id.INDEX) : s.id();
        String map = s.gpuMap().orElse("gpu");
        Inventory inv;
        try {
            inv = Nvml.load(lib, Nvml.PCI_DEVICES).discover();
        } catch (NvmlException e) {
            throw new Refused("no NVML: " + e.getMessage());
        }
        ComplexTable t = table.orElseGet(Discover::everyCharacteristic);
        String entry = GpuMap.entry(map, inv, t, n, ids, s.devDir());
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        inv.unread().forEach(line -> err.println("warning: " + line + " (left out)"));
        if (json) {
            ObjectNode o = JSON.createObjectNode().put("driver", inv.driver()).put("cuda", inv.cuda());
            ArrayNode gpus = o.putArray("gpus");
            for (Gpu g : inv.gpus()) {
                ObjectNode j = gpus.addObject().put("index", g.index()).put("uuid", g.uuid()).put("model", g.model())
                        .put("memory", g.memoryMib() + "M");
                if (g.numaNode().isPresent()) {
                    j.put("numa_node", g.numaNode().getAsInt());
                } else {
                    j.putNull("numa_node");
                }
                j.put("pci", g.pciBusId()).put("compute_capability", g.computeCapability());
                ArrayNode devices = j.putArray("devices");
                for (String d : GpuMap.devices(g, s.devDir()).split(";")) {
                    devices.add(d.substring(0, d.lastIndexOf(':')));
                }
            }
            o.put("complex_values", entry);
            java.util.List<rsmap.device.nvml.MigCard> mig = DiscoverMig.read(lib, err); // MIG cards, where any
            o.set("mig", DiscoverMig.json(mig));
            o.put("mig_complex_values", DiscoverMig.entry(s.mig().map().orElse("mig"), mig, inv, t, s.devDir()));
            ArrayNode unread = o.putArray("unread");
            inv.unread().forEach(unread::add);
            out.println(o);
            return 0;
        }
        out.println("nvidia driver " + inv.driver() + ", cuda " + inv.cuda() + ", " + inv.gpus().size() + " gpus (" + lib
                + ")");
        for (Gpu g : inv.gpus()) {
            out.printf("gpu %d  %s  %s  %dM  numa %s  pci %s  cc %s  %s%n", g.index(), g.uuid(), g.model(), g.memoryMib(),
                    g.numaNode().isPresent() ? Integer.toString(g.numaNode().getAsInt()) : "-", g.pciBusId(),
                    g.computeCapability(), GpuMap.devices(g, s.devDir()));
        }
        out.println("# complex table lines (qconf -sc) of the characteristics a built " + map + " carries where declared:");
        GpuMap.tableLines(t).forEach(out::println);
        out.println("# the complex_values entry rsmapd builds (gpu_map = " + map + ", gpu_shares = " + n + ", gpu_id = "
                + ids.name().toLowerCase(java.util.Locale.ROOT) + "):");
        out.println(entry);
        java.util.List<rsmap.device.nvml.MigCard> mig = DiscoverMig.read(lib, err);
        if (mig.stream().anyMatch(rsmap.device.nvml.MigCard::enabled)) {
            DiscoverMig.print(mig, out);
            out.println("# the complex_values entry rsmapd builds (mig_map = " + s.mig().map().orElse("mig") + "):");
            out.println(DiscoverMig.entry(s.mig().map().orElse("mig"), mig, inv, t, s.devDir()));
        }
        return 0;
    }

    /** Without a complex table: every characteristic, devices too, as the suggested lines declare them. */
    private static ComplexTable everyCharacteristic() {
        StringBuilder b = new StringBuilder();
        b.append("gpu gpu RSMAP <= YES HOST 0 0\n");
        b.append("devices dev STRING == YES NO NONE 0\n");
        try {
            GpuMap.tableLines(ComplexTable.parse(b.toString())).forEach(l -> b.append(l).append('\n'));
            return ComplexTable.parse(b.toString());
        } catch (ParseException e) {
            throw new IllegalStateException("the suggested complex table lines parse", e);
        }
    }
}
