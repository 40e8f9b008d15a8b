// rsmap device-policy: shows the device policy a grant would get, as systemd and as cgroup v1 lines.
package rsmap.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.device.DevicePolicy;
import rsmap.map.ComplexValues;
import rsmap.map.Instance;
import rsmap.map.ResourceMap;

@Command(name = "device-policy", mixinStandardHelpOptions = true, description = "Print the device policy a job "
        + "granted the given instances would run under, as systemd DeviceAllow= and cgroup v1 devices.allow lines.")
final class DevicePolicyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    TableOptions tables;

    @Option(names = "--host-values", required = true, paramLabel = "VALUE", description = "The host's complex_values.")
    String hostValues;

    @Option(names = "--grant", required = true, split = ",", paramLabel = "ID",
            description = "Granted identifiers, comma-separated; a repeated id is one more share.")
    List<String> grant;

    @Option(names = "--map", paramLabel = "NAME", description = "The resource map the ids belong to (needed when "
            + "the host has several).")
    String map;

    @Override
    public Integer call() throws Refused {
        ComplexTable table = tables.table();
        ComplexValues values;
        try {
            values = ComplexValues.parse(hostValues, table, tables.limits());
        } catch (ParseException e) {
            throw new Refused("--host-values: " + e.getMessage());
        }
        ResourceMap m = chooseMap(values);
        List<Instance> granted = new ArrayList<>();
        for (String id : grant) {
            Instance found = m.instance(id)
                    .orElseThrow(() -> new Refused("--grant: resource map " + m.name() + " has no instance '" + id + "'"));
            granted.add(found);
        }
        // As rsmapd enforces it: closed on a host whose maps list devices, even for a grant without any.
        DevicePolicy policy = DevicePolicy.of(granted, DevicePolicy.listsDevices(List.of(values)));
        PrintWriter out = spec.commandLine().getOut();
        if (policy.isOpen()) {
            out.println("# no instance carries devices: the job is not restricted");
            return 0;
        }
        out.println("# systemd (unit properties)");
        policy.systemdLines().forEach(out::println);
        out.println("# cgroup v1 (files of the job's devices cgroup)");
        policy.cgroupV1Lines().forEach(out::println);
        if (!policy.missing().isEmpty()) {
            out.println("# missing on this host, left out (never widened)");
            policy.missing().forEach(p -> out.println("# " + p));
        }
        return 0;
    }

    private ResourceMap chooseMap(ComplexValues values) throws Refused {
        List<ResourceMap> maps = values.resourceMaps();
        if (map != null) {
            return values.resourceMap(map).orElseThrow(() -> new Refused("--map: the host has no resource map '" + map
                    + "'"));
        }
        if (maps.size() != 1) {
            throw new Refused("--map: the host has " + maps.size() + " resource maps; say which one the ids belong to");
        }
        return maps.get(0);
    }
}
