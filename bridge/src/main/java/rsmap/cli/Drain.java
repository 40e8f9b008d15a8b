// rsmap drain and rsmap undrain (docs/health.md): the admin's taint of one instance, through rsmapd's
// DRAIN and UNDRAIN; exit 0 done, 2 refused (not root or the admin, no such map or instance).
package rsmap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import rsmap.wire.Code;

@Command(name = "drain", mixinStandardHelpOptions = true, description = "Taint an instance (every share of its id) so "
        + "that rsmapd grants it to no new job; the jobs holding it keep running. Root or admin_user only.")
final class Drain implements Callable<Integer> {
    @Spec
    CommandSpec spec;
    @Mixin
    DaemonCommands.SocketOption socket = new DaemonCommands.SocketOption();
    @Parameters(index = "0", paramLabel = "MAP", description = "The resource map.")
    String map;
    @Parameters(index = "1", paramLabel = "ID", description = "The instance's identifier.")
    String id;
    @Option(names = "--reason", paramLabel = "TEXT", description = "Why (one line; shown by status and explain).")
    String reason;

    @Override
    public Integer call() throws Refused {
        return change(spec, socket, Code.DRAIN, map, id, reason);
    }

    static int change(CommandSpec spec, DaemonCommands.SocketOption socket, Code code, String map, String id,
                      String reason) throws Refused {
        ObjectNode args = JsonNodeFactory.instance.objectNode().put("map", map).put("id", id);
        if (reason != null) {
            args.put("reason", reason);
        }
        JsonNode r = DaemonCommands.json(DaemonCommands.ask(socket, code, args.toString()).get(0));
        spec.commandLine().getOut().println(map + " " + id + ": " + health(r.path("health"))
                + (r.path("changed").asBoolean() ? "" : " (unchanged)"));
        return 0;
    }

    /** An instance's health as status shows it: {@code ok}, or {@code tainted (nvml: Xid 79, since ...)}. */
    static String health(JsonNode h) {
        if (!h.isObject()) {
            return h.asText("ok");
        }
        return "tainted (" + h.path("source").asText() + ": " + h.path("reason").asText() + ", since "
                + h.path("since").asText() + ")";
    }

    @Command(name = "undrain", mixinStandardHelpOptions = true, description = "Clear the admin's taint of an instance "
            + "(rsmap drain) and a failed MIG creation's taint of its card; taints from NVML or health_command stay. "
            + "Root or admin_user only.")
    static final class Undrain implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        DaemonCommands.SocketOption socket = new DaemonCommands.SocketOption();
        @Parameters(index = "0", paramLabel = "MAP", description = "The resource map.")
        String map;
        @Parameters(index = "1", paramLabel = "ID", description = "The instance's identifier.")
        String id;

        @Override
        public Integer call() throws Refused {
            return change(spec, socket, Code.UNDRAIN, map, id, null);
        }
    }
}
