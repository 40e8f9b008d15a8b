// rsmap place: asks the authority (PLACE) where a job's options can run now, or which hosts pass
// a filter - what the OCS JSV and Slurm's job_submit.lua call at submission.
package rsmap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.FrameDecoder;

/**
 * Exit codes: 0 an option can start now (or, for a filter alone, some host passes); 3 none can (no host
 * passes), the answer saying why; 2 a refusal (a filter or request that does not read: one line with its
 * column; ERROR refused, malformed or denied; options over the protocol's frame bound, not sent); 1 the
 * authority cannot be reached, does not answer within 30 s, or answers busy, unavailable or internal. With
 * --json or --shell an ERROR also prints its category on stdout ({"error","category"}; error= and category=
 * lines), for scripts to decide by.
 */
@Command(name = "place", mixinStandardHelpOptions = true, description = "Ask the authority (role = authority) where a "
        + "job can run now: a filter alone lists the hosts that pass and the attribute each other fails; with a request "
        + "and slots, or alternatives, the chosen option and hosts, or why none fits (docs/alternatives.md).")
final class Place implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final int NONE_FITS = 3;

    @Spec
    CommandSpec spec;
    @Mixin
    DaemonCommands.SocketOption socket = new DaemonCommands.SocketOption();
    @Option(names = "--filter", paramLabel = "EXPR", description = "The job's node filter, e.g. 'cpu_speed > 2GHz'.")
    String filter;
    @Option(names = "--request", paramLabel = "REQUEST", description = "The resource-map request of the one option.")
    String request;
    @Option(names = "--slots", paramLabel = "N", description = "Total slots to place (default 1 with --request).")
    Integer slots;
    @Option(names = "--candidates", paramLabel = "HOST,...", split = ",", description = "Only these hosts.")
    List<String> candidates = new ArrayList<>();
    @Option(names = "--group", paramLabel = "ATTRIBUTE", description = "All chosen hosts share this attribute's value.")
    String group;
    @Option(names = "--group-values", paramLabel = "VALUE,...", split = ",", description = "Acceptable values of "
            + "--group, in preference order.")
    List<String> groupValues = new ArrayList<>();
    @Option(names = "--whole-hosts", description = "Only hosts used to their full slot capacity, as few as possible.")
    boolean wholeHosts;
    @Option(names = "--alternatives", paramLabel = "JSON", description = "The options as a JSON list, e.g. "
            + "'[{\"request\":\"gpu=4\",\"slots\":1},{\"request\":\"gpu=2\",\"slots\":1}]', in the user's order.")
    String alternatives;
    @Option(names = "--json", description = "Print the authority's answer as JSON (one line); an ERROR as "
            + "{\"error\",\"category\"}.")
    boolean json;
    @Option(names = "--shell", description = "Print NAME='value' lines for a shell script (the JSV): decision, "
            + "alternative, hosts, pass, fail (the first failing host and why), why.")
    boolean shell;

    @Override
    public Integer call() throws Refused {
        ObjectNode arg = JSON.createObjectNode();
        if (filter != null) {
            arg.put("filter", filter);
        }
        if (alternatives != null) {
            try {
                JsonNode list = JSON.readTree(alternatives);
                if (list == null || !list.isArray()) {
                    throw new Refused("--alternatives: a JSON list of options");
                }
                arg.set("alternatives", list);
            } catch (IOException e) {
                throw new Refused("--alternatives: not JSON: " + e.getMessage().lines().findFirst().orElse(""));
            }
        }
        if (request != null || slots != null) {
            arg.put("request", request == null ? "" : request).put("slots", slots == null ? 1 : slots);
        }
        if (!candidates.isEmpty()) {
            ArrayNode c = arg.putArray("candidates");
            candidates.forEach(c::add);
        }
        if (group != null) {
            arg.put("group", group);
            ArrayNode v = arg.putArray("group_values");
            groupValues.forEach(v::add);
        }
        if (wholeHosts) {
            arg.put("whole_hosts", true);
        }
        if (arg.size() == 0) {
            throw new Refused("place needs --filter, --request/--slots or --alternatives");
        }
        PrintWriter out = spec.commandLine().getOut();
        String text = arg.toString();
        JsonNode a;
        try {
            // Over the protocol's bound the frame is never sent (the authority would refuse it and close): the
            // job's options are too long, which is the job's fault, not the authority out of reach (as rsmap-place).
            Frame frame = Frame.of(0, Code.PLACE.value(), text);
            if (frame.bodyLength() > FrameDecoder.DEFAULT_MAX_FRAME) {
                throw Refused.refusedInput("the argument of PLACE (" + frame.args().get(0).length
                        + " bytes as JSON) is over the protocol's " + (FrameDecoder.DEFAULT_MAX_FRAME >> 20)
                        + " MiB frame bound: not sent");
            }
            a = DaemonCommands.json(DaemonCommands.ask(socket, Code.PLACE, text).get(0));
        } catch (Refused r) {
            // For scripts (job_submit.lua, the JSV): the ERROR's category to decide by, besides the exit code.
            r.category().ifPresent(c -> {
                if (json) {
                    out.println(JSON.createObjectNode().put("error", r.getMessage()).put("category", c.wire()));
                } else if (shell) {
                    out.println("error=" + quote(r.getMessage()));
                    out.println("category=" + quote(c.wire()));
                }
            });
            throw r;
        }
        boolean fits = a.has("decision") ? !a.path("decision").asText().equals("none") : a.path("pass").size() > 0;
        if (json) {
            out.println(a);
            return fits ? Main.OK : NONE_FITS;
        }
        if (shell) {
            List<String> hosts = new ArrayList<>();
            a.path("hosts").fieldNames().forEachRemaining(hosts::add);
            JsonNode fail = a.path("fail").path(0);
            out.println("decision=" + quote(a.path("decision").asText(a.path("pass").isEmpty() ? "none" : "start")));
            out.println("alternative=" + quote(a.has("alternative") ? a.path("alternative").asText() : ""));
            out.println("hosts=" + quote(String.join(" ", hosts)));
            out.println("pass=" + quote(join(a.path("pass"))));
            out.println("fail=" + quote(fail.isMissingNode() ? "" : fail.path("host").asText() + ": "
                    + fail.path("why").asText()));
            out.println("why=" + quote(a.path("why").asText("")));
            return fits ? Main.OK : NONE_FITS;
        }
        if (a.has("filter")) {
            out.println("filter " + a.path("filter").asText() + ": " + a.path("pass").size() + " hosts pass"
                    + (a.path("pass").isEmpty() ? "" : ": " + join(a.path("pass"))));
            for (JsonNode f : a.path("fail")) {
                out.println("  " + f.path("host").asText() + " fails (" + f.path("source").asText() + "): "
                        + f.path("why").asText());
            }
        }
        if (a.has("decision")) {
            String alt = a.has("alternative") ? "alternative " + a.path("alternative").asInt() + " " : "";
            switch (a.path("decision").asText()) {
                case "start" -> out.println(alt + "can start now on " + hosts(a.path("hosts")));
                case "planned" -> out.println(alt + "can start at " + a.path("start").asLong() + " on "
                        + hosts(a.path("hosts")));
                default -> out.println("nothing fits now");
            }
            out.println("  " + a.path("why").asText());
        }
        return fits ? Main.OK : NONE_FITS;
    }

    /** A value a POSIX shell reads back with eval: single-quoted, its own quotes closed and escaped. */
    static String quote(String v) {
        return "'" + v.replace("'", "'\\''") + "'";
    }

    private static String join(JsonNode list) {
        List<String> out = new ArrayList<>();
        list.forEach(x -> out.add(x.asText()));
        return String.join(" ", out);
    }

    private static String hosts(JsonNode hosts) {
        List<String> out = new ArrayList<>();
        hosts.fields().forEachRemaining(e -> out.add(e.getKey() + " (" + e.getValue().asInt() + " slots)"));
        return String.join(", ", out);
    }
}
