// The commands that talk to a running rsmapd over its socket: status, explain, reload, events.
package rsmap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;
import rsmap.wire.Client;
import rsmap.wire.Code;
import rsmap.wire.Frame;

/** Each refusal of the daemon (an ERROR event) is one {@code error:} line and exit code 2. */
final class DaemonCommands {
    private static final ObjectMapper JSON = new ObjectMapper();

    private DaemonCommands() {
    }

    /** --socket, default $RSMAP_SOCKET or /run/rsmap/rsmapd.sock. */
    static final class SocketOption {
        @Option(names = "--socket", paramLabel = "PATH", description = "rsmapd's socket (default: $RSMAP_SOCKET, else "
                + "/run/rsmap/rsmapd.sock).")
        Path socket;

        Path path() {
            if (socket != null) {
                return socket;
            }
            String env = System.getenv("RSMAP_SOCKET");
            return Path.of(env == null || env.isEmpty() ? "/run/rsmap/rsmapd.sock" : env);
        }

        /**
         * Connected and INIT answered; every read and write of the connection waits at most {@link #TIMEOUT}.
         * Every failure to ask rsmapd is exit 1, whichever command (rsmap(1), "EXIT STATUS").
         */
        Client connect() throws Refused {
            try {
                return Client.connect(path(), TIMEOUT);
            } catch (Client.Untrusted e) {
                throw Refused.fault(e.getMessage()); // it answered: rsmapd is running, somewhere else
            } catch (java.net.SocketTimeoutException e) {
                throw Refused.fault("rsmapd at " + path() + ": " + e.getMessage());
            } catch (IOException e) {
                throw Refused.fault(e.getMessage() + " (is rsmapd running? systemctl status rsmapd)");
            } catch (Client.Refusal e) {
                throw Refused.of(e);
            }
        }
    }

    /**
     * How long a command waits for rsmapd: each read and write of its connection, 30 s, or fewer seconds
     * from $RSMAP_TIMEOUT (as the C clients read it: never longer) (rsmap(1)).
     */
    static final java.time.Duration TIMEOUT = java.time.Duration.ofSeconds(timeoutSeconds(System.getenv("RSMAP_TIMEOUT")));

    static long timeoutSeconds(String env) {
        try {
            long s = env == null ? 0 : Long.parseLong(env);
            return s > 0 && s < 30 ? s : 30;
        } catch (NumberFormatException e) {
            return 30;
        }
    }

    /** One command, its events; a refusal or a lost connection is one line. */
    static List<Frame> ask(SocketOption socket, Code code, String... args) throws Refused {
        try (Client c = socket.connect()) {
            return c.call(code, args);
        } catch (Client.Refusal e) {
            throw Refused.of(e);
        } catch (Client.Oversize e) {
            throw Refused.refusedInput(e.getMessage()); // never sent: the command's input, exit 2
        } catch (IOException e) {
            throw Refused.fault("rsmapd: " + e.getMessage());
        }
    }

    static JsonNode json(Frame f) throws Refused {
        try {
            return JSON.readTree(f.text(0));
        } catch (IOException e) {
            throw new Refused("rsmapd answered something that is not JSON: " + e.getMessage());
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, description = "Show what a running rsmapd holds: every "
            + "instance with its holder, and the jobs with their grants.")
    static final class Status implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        SocketOption socket = new SocketOption();
        @Option(names = "--json", description = "Print the daemon's STATE as JSON.")
        boolean json;
        @Option(names = "--cluster", description = "Against the authority (role = authority): the global maps with "
                + "their holders as HOST:JOB, every registered host with its instances and holders, and the groups "
                + "jobs with scope=job are held to on their hosts.")
        boolean cluster;

        @Override
        public Integer call() throws Refused {
            JsonNode q = json(cluster ? ask(socket, Code.QUERY, "{\"cluster\":true}").get(0) : ask(socket, Code.QUERY).get(0));
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                out.println(q);
                return 0;
            }
            if (q.path("role").asText().equals("standby")) { // docs/cluster.md, "Active and standby"
                out.println("standby authority " + q.path("authority").asText() + ", following " + (q.path("follows")
                        .isTextual() ? q.path("follows").asText() + " (active since " + q.path("since").asText()
                        + ", epoch " + q.path("epoch").asLong() + ")" : "no one yet") + "; takes over after "
                        + q.path("takeover_timeout").asInt() + " s without a renewal");
                return 0;
            }
            if (cluster) {
                out.println("authority, configuration generation " + q.path("generation").asLong() + ", "
                        + q.path("hosts").size() + " registered hosts");
                if (q.has("active")) {
                    JsonNode a = q.path("active");
                    out.println("active authority " + a.path("authority").asText() + " since " + a.path("since").asText()
                            + ", epoch " + a.path("epoch").asLong());
                }
                out.println("global maps" + (q.path("maps").isEmpty() ? ": none" : ""));
                maps(out, q.path("maps"), "  ");
                for (Iterator<Map.Entry<String, JsonNode>> it = q.path("hosts").fields(); it.hasNext();) {
                    Map.Entry<String, JsonNode> h = it.next();
                    out.println("host " + h.getKey() + (h.getValue().path("connected").asBoolean() ? ""
                            : " (not connected; as it last told, registered " + h.getValue().path("registered").asText()
                            + ")"));
                    maps(out, h.getValue().path("maps"), "  ");
                }
                for (Iterator<Map.Entry<String, JsonNode>> it = q.path("job_keys").fields(); it.hasNext();) {
                    Map.Entry<String, JsonNode> k = it.next(); // one group for the whole job (docs/cluster.md)
                    List<String> keys = new ArrayList<>();
                    k.getValue().path("keys").fields().forEachRemaining(e -> keys.add(e.getKey() + "=" + e.getValue().asText()));
                    List<String> on = new ArrayList<>();
                    k.getValue().path("hosts").forEach(h -> on.add(h.asText()));
                    out.println("job " + k.getKey() + " held to scope=job groups " + String.join(",", keys) + " on "
                            + String.join(" ", on));
                }
                return 0;
            }
            out.println("host " + q.path("host").asText() + ", configuration generation " + q.path("generation").asLong());
            if (q.has("authority")) {
                JsonNode a = q.path("authority");
                out.println("authority " + a.path("address").asText() + ": " + (a.path("connected").asBoolean()
                        ? "connected" + (a.has("active") ? " to " + a.path("active").asText() : "")
                        : "unreachable (" + a.path("error").asText() + ")"));
                for (JsonNode u : a.path("unconfirmed")) {
                    out.println("  job " + u.asText() + ": its global grant is not the authority's; it gets no new "
                            + "global instance until an admin ends it (JOB_END)");
                }
            }
            if (q.has("nvidia")) {
                JsonNode n = q.path("nvidia");
                out.println("nvidia driver " + n.path("driver").asText() + ", cuda " + n.path("cuda").asText() + ", "
                        + n.path("gpus").size() + " gpus");
                for (JsonNode g : n.path("gpus")) {
                    out.printf("  gpu %-3s %s  %s  %s  numa %s  pci %s  cc %s%n", g.path("index").asText(),
                            g.path("uuid").asText(), g.path("model").asText(), g.path("memory").asText(),
                            g.path("numa_node").isNull() ? "-" : g.path("numa_node").asText(), g.path("pci").asText(),
                            g.path("compute_capability").asText());
                }
            }
            if (q.has("mig")) { // docs/gpus.md, "Partitions on demand": the slices in the driver
                out.println("mig slices" + (q.path("mig").isEmpty() ? ": none" : ""));
                for (JsonNode x : q.path("mig")) {
                    out.printf("  %-8s %-8s on %s  gi %s ci %s  %s  %s%n", x.path("profile").asText(),
                            x.path("state").asText(), x.path("card").asText(), x.path("gi").asText(), x.path("ci").asText(),
                            x.path("uuid").asText().isEmpty() ? "-" : x.path("uuid").asText(),
                            x.path("job").asText().isEmpty() ? "(not rsmapd's)" : "job " + x.path("job").asText());
                }
            }
            maps(out, q.path("maps"), "");
            out.println("jobs" + (q.path("jobs").isEmpty() ? ": none" : ""));
            for (JsonNode j : q.path("jobs")) {
                List<String> env = new ArrayList<>();
                j.path("env").fields().forEachRemaining(e -> env.add(e.getKey() + "=" + e.getValue().asText()));
                out.printf("  %-10s %-10s %s -> %s%n", j.path("job").asText(), j.path("user").asText(),
                        j.path("request").asText(), String.join(" ", env));
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = q.path("leftovers").fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> l = it.next();
                out.println("  job " + l.getKey() + " ended; processes left in its cgroup, denied every device until"
                        + " they exit: " + l.getValue().toString().replaceAll("[\\[\\]]", "").replace(",", " "));
            }
            return 0;
        }
    }

    /**
     * Each map with its instances and their holders (or, free, what an exclusion blocks them by: {@link #blocked}),
     * indented by {@code indent}.
     */
    static void maps(PrintWriter out, JsonNode maps, String indent) {
        for (Iterator<Map.Entry<String, JsonNode>> it = maps.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> m = it.next();
            out.println(indent + m.getKey() + " (" + m.getValue().path("amount").asInt() + " instances)");
            for (JsonNode i : m.getValue().path("instances")) {
                String holder = i.path("holder").asText();
                out.printf("%s  %-12s %-24s %s%n", indent, i.path("id").asText(), !holder.isEmpty() ? "held by job " + holder
                        : i.has("blocked") ? blocked(i.path("blocked")) : "free", Drain.health(i.path("health")));
            }
        }
    }

    /**
     * A free instance an exclusion keeps out of use (docs/protocol.md, QUERY's {@code blocked}):
     * {@code blocked by mig 0:1g.10gb@6 (job 7)}, {@code blocked by gpu 0 (tainted)}, or
     * {@code blocked (occupied by slice gi 13 (1g.10gb) that rsmapd did not create)}.
     */
    static String blocked(JsonNode b) {
        if (!b.has("map")) {
            return "blocked (" + b.path("reason").asText() + ")";
        }
        return "blocked by " + b.path("map").asText() + " " + b.path("id").asText() + " ("
                + (b.has("job") ? "job " + b.path("job").asText() : "tainted") + ")";
    }

    @Command(name = "explain", mixinStandardHelpOptions = true, description = "Why a request can or cannot start on "
            + "this host now, instance by instance: asks the running rsmapd, or, with --complexes and --host-values, "
            + "an idle host.")
    static final class Explain implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        SocketOption socket = new SocketOption();
        @Option(names = "--complexes", paramLabel = "FILE", description = "Explain offline against this complex table.")
        Path complexes;
        @Option(names = "--host-values", paramLabel = "VALUE", description = "The idle host's complex_values (offline).")
        String hostValues;
        @Parameters(index = "0", paramLabel = "REQUEST", description = "The request, e.g. 'gpu=4[same=id]'.")
        String request;

        @Override
        public Integer call() throws Refused {
            PrintWriter out = spec.commandLine().getOut();
            if (complexes != null || hostValues != null) {
                if (complexes == null || hostValues == null) {
                    throw new Refused("offline explain needs both --complexes and --host-values");
                }
                ComplexTable table = Inputs.complexes(complexes, Limits.DEFAULT);
                Cluster c = new Cluster(table);
                try {
                    c.configure("host", ComplexValues.parse(hostValues, table), 0);
                } catch (ParseException e) {
                    throw new Refused("--host-values: " + e.getMessage());
                }
                rsmap.alloc.Explanation x;
                try {
                    x = c.explain(RequestList.parse(request, table), "host");
                } catch (ParseException e) {
                    throw new Refused("REQUEST: " + e.getMessage());
                }
                out.print(verdict(x.canStart(), "an idle host") + x.toHuman());
                return 0;
            }
            JsonNode q = json(ask(socket, Code.QUERY, JSON.createObjectNode().put("explain", request).toString()).get(0));
            JsonNode x = q.path("explain");
            out.print(verdict(x.path("can_start").asBoolean(), "host " + q.path("host").asText() + " now")
                    + x.path("text").asText());
            return 0;
        }

        private String verdict(boolean canStart, String where) {
            return request + (canStart ? " can start on " : " cannot start on ") + where + "\n";
        }
    }

    @Command(name = "reload", mixinStandardHelpOptions = true, description = "Make rsmapd re-read its configuration "
            + "(complex_values); refused while the change would take an instance a running job holds.")
    static final class Reload implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        SocketOption socket = new SocketOption();

        @Override
        public Integer call() throws Refused {
            JsonNode r = json(ask(socket, Code.RELOAD).get(0));
            spec.commandLine().getOut().println("configuration generation " + r.path("generation").asLong()
                    + (r.path("changed").asBoolean() ? " (changed)" : " (unchanged)"));
            return 0;
        }
    }

    @Command(name = "events", mixinStandardHelpOptions = true, description = "Follow rsmapd's events: the full state, "
            + "then one JSON line per grant, release and configuration change, until interrupted.")
    static final class Events implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        SocketOption socket = new SocketOption();
        @Option(names = "--map", paramLabel = "NAME", description = "Only events about this map (repeatable).")
        List<String> maps = new ArrayList<>();
        @Option(names = "--job", paramLabel = "ID", description = "Only this job (repeatable; 7 includes its tasks).")
        List<String> jobs = new ArrayList<>();
        @Option(names = "--user", paramLabel = "NAME", description = "Only this user's jobs (repeatable).")
        List<String> users = new ArrayList<>();
        @Option(names = "--kind", paramLabel = "KIND", description = "grant, release, config, taint or untaint (repeatable).")
        List<String> kinds = new ArrayList<>();

        @Override
        public Integer call() throws Refused {
            Map<String, List<String>> filters = new LinkedHashMap<>();
            filters.put("map", maps);
            filters.put("job", jobs);
            filters.put("user", users);
            filters.put("event", kinds);
            PrintWriter out = spec.commandLine().getOut();
            try (Client c = socket.connect()) {
                c.call(Code.SET_FILTERS, JSON.writeValueAsString(filters));
                c.readTimeout(java.time.Duration.ZERO); // a stream: events come when they come
                c.stream(Code.START_EVENTS, f -> {
                    out.println(f.text(0));
                    out.flush();
                });
                return 0;
            } catch (Client.Refusal e) {
                throw Refused.of(e);
            } catch (Client.Oversize e) {
                throw Refused.refusedInput(e.getMessage());
            } catch (IOException e) {
                throw Refused.fault("rsmapd: " + e.getMessage());
            }
        }
    }
}
