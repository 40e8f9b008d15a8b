// rsmap cdi-spec: a static CDI spec of every instance on the host, per map whose instances list devices
// (kind rsmap.io/<map>), for sites that hand out devices another way (docs/containers.md).
package rsmap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import rsmap.cdi.CdiSpec;
import rsmap.device.DeviceRule;
import rsmap.wire.Code;

/** The instances come from the running rsmapd's QUERY; their device numbers are read on this host. */
@Command(name = "cdi-spec", mixinStandardHelpOptions = true, description = "Print a CDI spec of every instance on "
        + "this host: one per map whose instances list devices (kind rsmap.io/<map>, a device per instance id).")
final class CdiSpecCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();
    @Spec
    CommandSpec spec;
    @Mixin
    DaemonCommands.SocketOption socket = new DaemonCommands.SocketOption();
    @Option(names = "--json", description = "Print the specs as a JSON array, each valid against the CDI schema.")
    boolean json;

    @Override
    public Integer call() throws Refused {
        JsonNode q = DaemonCommands.json(DaemonCommands.ask(socket, Code.QUERY).get(0));
        List<CdiSpec> specs = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = q.path("maps").fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> m = it.next();
            specOf(m.getKey(), m.getValue().path("instances"), missing).ifPresent(specs::add);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            ArrayNode all = JSON.createArrayNode();
            specs.forEach(s -> all.add(s.json()));
            out.println(all.toPrettyString());
        } else {
            if (specs.isEmpty()) {
                out.println("no instance on host " + q.path("host").asText() + " lists devices");
            }
            for (CdiSpec s : specs) {
                for (CdiSpec.Device d : s.devices()) {
                    List<String> nodes = new ArrayList<>();
                    d.nodes().forEach(r -> nodes.add(r.path() + " " + r.cgroupV1()));
                    out.println(s.kind() + "=" + d.name() + "  " + String.join(", ", nodes));
                }
            }
        }
        missing.forEach(p -> spec.commandLine().getErr().println("warning: " + p));
        return 0;
    }

    /** The spec of map {@code name}, empty when none of its instances lists devices. */
    private static Optional<CdiSpec> specOf(String name, JsonNode instances, List<String> missing) throws Refused {
        Map<String, List<String>> byId = new LinkedHashMap<>(); // an id repeated (sharing) is one device
        for (JsonNode i : instances) {
            if (i.has("devices")) {
                byId.computeIfAbsent(i.path("id").asText(), k -> new ArrayList<>()).add(i.path("devices").asText());
            }
        }
        if (byId.isEmpty()) {
            return Optional.empty();
        }
        Optional<String> bad = CdiSpec.classProblem(name);
        if (bad.isPresent()) {
            throw new Refused("map " + bad.get() + ": rename the map to have a CDI spec of it");
        }
        List<CdiSpec.Device> devices = new ArrayList<>();
        for (Map.Entry<String, List<String>> e : byId.entrySet()) {
            Optional<String> badId = CdiSpec.nameProblem(e.getKey());
            if (badId.isPresent()) {
                throw new Refused("map " + name + ": instance " + badId.get());
            }
            CdiSpec.Nodes n = CdiSpec.nodesOf(e.getValue());
            n.missing().forEach(p -> missing.add(name + " " + e.getKey() + ": " + p + " is no device node here: left out"));
            List<DeviceRule> nodes = n.found();
            devices.add(new CdiSpec.Device(e.getKey(), nodes, List.of()));
        }
        return Optional.of(new CdiSpec(CdiSpec.VENDOR + "/" + name, devices));
    }
}
