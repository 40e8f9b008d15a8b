// rsmap gres-conf: Slurm's gres.conf lines for this host's resource maps, so that slurmctld
// places a job only on a node with as many instances as its --rsmap asks (job_submit.lua adds the GRES).
package rsmap.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.complex.Consumable;
import rsmap.complex.Value;
import rsmap.daemon.config.Config;
import rsmap.daemon.devices.GpuMap;
import rsmap.device.nvml.Inventory;
import rsmap.device.nvml.Nvml;
import rsmap.device.nvml.NvmlException;
import rsmap.map.ComplexValues;
import rsmap.map.DeviceList;
import rsmap.map.Instance;
import rsmap.map.ResourceMap;

/**
 * One count-only line per resource map of this host, {@code NodeName=<host> Name=rsmap_<map>
 * Count=<instances> Flags=CountOnly} (Slurm's gres.conf(5)), with the slurm.conf lines that go with it in
 * comments. The GRES is named {@value #PREFIX}{@code <map>}, never the map's own name: Slurm 22.05's GPU
 * plugin drops a file-less {@code gpu} from the node ("Removing file-less GPU"), and its own names (gpu,
 * mps, shard, nic) bring plugins that set the job's environment; a prefixed name is a plain count. A per-slot map
 * (consumable YES) is left out with a comment: rsmap grants it per CPU, Slurm counts a GRES per node.
 * {@code File=} only with {@code --files}, and only where every instance has one device file of its own:
 * Slurm requires as many files as the count, and it would then pick devices itself (and set
 * CUDA_VISIBLE_DEVICES to its pick, which need not be rsmap's grant); see docs/integration-slurm.md. A
 * {@code gpu_map} built from NVML counts the cards rsmapd would build it from (times {@code gpu_shares}).
 */
@Command(name = "gres-conf", mixinStandardHelpOptions = true, description = "Print Slurm gres.conf lines for this "
        + "host's resource maps (NodeName=HOST Name=rsmap_MAP Count=INSTANCES Flags=CountOnly), with the slurm.conf GresTypes= and Gres= "
        + "lines in comments; job_submit.lua gives each --rsmap job the GRES its request implies.")
final class GresConf implements Callable<Integer> {
    /** What job_submit.lua takes off a gres.conf Name= to find the map. */
    static final String PREFIX = "rsmap_";
    private static final Pattern NUMBERED = Pattern.compile("(.*?)(0|[1-9][0-9]{0,8})");

    @Spec
    CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE", description = "rsmapd's configuration (default: "
            + "/etc/rsmap/rsmapd.conf).")
    Path config = Path.of("/etc/rsmap/rsmapd.conf");

    @Option(names = "--files", description = "Add File= where every instance of a map has one device file of its "
            + "own (devices= characteristic, no sharing).")
    boolean files;

    @Override
    public Integer call() throws Refused {
        Limits limits = Limits.DEFAULT;
        Config c;
        try {
            c = Config.parse(Inputs.text(config, limits), config, hostName());
        } catch (ParseException e) {
            throw new Refused(config + ": " + e.lineAndColumn() + ": " + e.problem());
        }
        if (c.isAuthority()) {
            throw new Refused(config + ": role = authority has no host maps; run gres-conf with a host's rsmapd.conf");
        }
        ComplexTable table = Inputs.complexes(c.complexes(), limits);
        ComplexValues values;
        try {
            values = ComplexValues.parse(withGpuMap(c, table, limits), table, limits);
        } catch (ParseException e) {
            throw new Refused(config + ": complex_values: " + e.lineAndColumn() + ": " + e.problem());
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println("# gres.conf for " + c.host() + " from " + config + " (rsmap gres-conf): Slurm counts rsmap's "
                + "instances; rsmapd grants them");
        List<String> lines = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        Set<String> names = new LinkedHashSet<>();
        for (ResourceMap m : values.resourceMaps()) {
            if (m.complex().consumable() == Consumable.YES) {
                notes.add("# " + m.name() + ": left out, consumable YES (rsmap grants it per slot, Slurm counts per node)");
                continue;
            }
            names.add(PREFIX + m.name() + ":" + m.amount());
            String line = "NodeName=" + c.host() + " Name=" + PREFIX + m.name() + " Count=" + m.amount()
                    + " Flags=CountOnly";
            if (files) {
                Optional<String> f = fileList(m);
                if (f.isPresent()) {
                    line += " File=" + f.get();
                } else {
                    notes.add("# " + m.name() + ": no File=, its instances do not each have one device file of their own");
                }
            }
            lines.add(line);
        }
        if (!names.isEmpty()) {
            out.println("# slurm.conf: GresTypes=" + String.join(",",
                    names.stream().map(n -> n.substring(0, n.lastIndexOf(':'))).toList()));
            out.println("# slurm.conf: NodeName=" + c.host() + " ... Gres=" + String.join(",", names));
        }
        notes.forEach(out::println);
        lines.forEach(out::println);
        return 0;
    }

    /**
     * complex_values with gpu_map built from NVML where they have no entry for it, as rsmapd builds it at its
     * start (docs/gpus.md, "Declare"): the GRES counts the instances rsmapd will serve. No NVML: refused.
     */
    private static String withGpuMap(Config c, ComplexTable table, Limits limits) throws Refused, ParseException {
        String text = c.complexValues().strip();
        String map = c.gpus().gpuMap().orElse(null);
        if (map == null || ComplexValues.parse(text, table, limits).resourceMap(map).isPresent()) {
            return text;
        }
        String lib = c.gpus().nvmlLibrary().orElseThrow(() -> new Refused("gpu_map = " + map
                + " is built from NVML, and nvml_library = off"));
        Inventory inv;
        try {
            inv = Nvml.load(lib, Nvml.PCI_DEVICES).discover();
        } catch (NvmlException e) {
            throw new Refused("gpu_map = " + map + " is built from NVML, and there is none: " + e.getMessage());
        }
        String entry = GpuMap.entry(map, inv, table, c.gpus().shares(), c.gpus().id(), c.gpus().devDir());
        return text.isEmpty() || text.equalsIgnoreCase("NONE") ? entry : text + "," + entry;
    }

    /**
     * The device files of the map as gres.conf's File= value, when each instance has exactly one and no two
     * share one: {@code /dev/nvidia[0-1]} where the names are one stem and consecutive numbers, else a
     * comma-separated list (File= is read as a host list).
     */
    static Optional<String> fileList(ResourceMap m) {
        List<String> paths = new ArrayList<>();
        for (Instance i : m.instances()) {
            Optional<Value> v = i.characteristics().get(DeviceList.CHARACTERISTIC);
            if (v.isEmpty()) {
                return Optional.empty();
            }
            DeviceList d;
            try {
                d = DeviceList.parse(v.get().text());
            } catch (ParseException e) {
                return Optional.empty(); // read when the host configuration was; cannot happen
            }
            if (d.devices().size() != 1 || paths.contains(d.devices().get(0).path())) {
                return Optional.empty();
            }
            paths.add(d.devices().get(0).path());
        }
        if (paths.isEmpty() || paths.stream().anyMatch(p -> p.contains(",") || p.contains("[") || p.contains("]"))) {
            return Optional.empty();
        }
        String stem = null;
        int first = -1;
        for (int k = 0; k < paths.size(); k++) {
            Matcher n = NUMBERED.matcher(paths.get(k));
            if (!n.matches() || (stem != null && !stem.equals(n.group(1)))
                    || (first >= 0 && Integer.parseInt(n.group(2)) != first + k)) {
                return Optional.of(String.join(",", paths));
            }
            stem = n.group(1);
            first = k == 0 ? Integer.parseInt(n.group(2)) : first;
        }
        return Optional.of(paths.size() == 1 ? paths.get(0) : stem + "[" + first + "-" + (first + paths.size() - 1) + "]");
    }

    /** The system's short host name, as rsmapd takes it where the configuration names none. */
    private static String hostName() {
        try {
            String h = Files.readString(Path.of("/proc/sys/kernel/hostname"), StandardCharsets.UTF_8).strip();
            if (!h.isEmpty()) {
                return h.contains(".") ? h.substring(0, h.indexOf('.')) : h;
            }
        } catch (IOException e) {
            // not Linux: ask the JDK
        }
        try {
            String h = InetAddress.getLocalHost().getHostName();
            return h.contains(".") ? h.substring(0, h.indexOf('.')) : h;
        } catch (IOException e) {
            return "localhost";
        }
    }
}
