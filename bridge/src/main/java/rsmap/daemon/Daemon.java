// rsmapd's core: the allocation state of this host, kept in the journal, served over the agent protocol.
package rsmap.daemon;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Decision;
import rsmap.alloc.Explanation;
import rsmap.alloc.JobSpec;
import rsmap.complex.ComplexTable;
import rsmap.journal.Journal;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.SocketServer;

/**
 * The daemon of one execution host. JOB_START grants the job's instances on this host and JOB_END gives
 * them back; both are in the journal before the answer goes out, and at start the journal is replayed
 * through the same allocation core, which decides deterministically, so the grants come back exactly
 * (issue 5). Commands are handled one at a time on the state; the socket serves clients concurrently.
 */
public final class Daemon implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Config config;
    private final Cluster cluster;
    private final Journal journal;
    private final Limits limits;
    private SocketServer server;

    /** Builds the state from the configuration and replays the journal. */
    public Daemon(Config config, ComplexTable table) throws ParseException, IOException {
        this.config = config;
        this.limits = Limits.DEFAULT.withMaxRsmapIds(config.maxRsmapIds());
        this.cluster = new Cluster(table);
        cluster.configure(config.host(), ComplexValues.parse(config.complexValues(), table, limits), 0);
        ComplexValues global = ComplexValues.parse(config.globalComplexValues(), table, limits);
        if (!global.entries().isEmpty()) {
            cluster.configure(Cluster.GLOBAL, global, 0);
        }
        this.journal = Journal.open(config.stateDir().resolve("journal"));
        for (String record : journal.replayed()) {
            replay(record);
        }
    }

    /** Starts serving on the configured socket. */
    public Daemon serve() throws IOException {
        server = new SocketServer(config.socket(), () -> this::handle, config.maxFrame());
        return this;
    }

    public Cluster cluster() {
        return cluster;
    }

    private void replay(String record) throws IOException {
        JsonNode r = JSON.readTree(record);
        String id = r.path("job").asText();
        if (r.path("op").asText().equals("start")) {
            try {
                cluster.submit(spec(id, r.path("request").asText(), r.path("slots").asInt(1)), 0);
            } catch (ParseException e) {
                throw new IOException("journal: job " + id + " no longer parses: " + e.getMessage(), e);
            }
        } else {
            cluster.finish(id, 0);
        }
    }

    private JobSpec spec(String id, String request, int slots) throws ParseException {
        return new JobSpec(id, RequestList.parse(request, cluster.table(), limits), Map.of(config.host(), slots),
                config.host(), JobSpec.UNLIMITED, Optional.empty(), false);
    }

    /** One command of one client; state changes are serialised here. */
    synchronized List<Frame> handle(Code code, Frame command, Session.Peer peer) throws Session.CommandException {
        switch (code) {
            case JOB_START:
                authorise(code, peer);
                return jobStart(command);
            case JOB_END:
                authorise(code, peer);
                return jobEnd(command);
            case QUERY:
                return List.of(Frame.of(command.tid(), Code.STATE.value(), query().toString()));
            default:
                throw new Session.CommandException(code + " is not implemented yet");
        }
    }

    private void authorise(Code code, Session.Peer peer) throws Session.CommandException {
        if (!peer.isRoot() && !peer.user().equals(config.adminUser())) {
            throw new Session.CommandException(code + " is for root or the admin user " + config.adminUser() + ", not '"
                    + peer.user() + "'");
        }
    }

    /** {"job":"7","task":"1","slots":1,"request":"gpu=2[same=id]"} answered by STATE {job, grants, env}. */
    private List<Frame> jobStart(Frame command) throws Session.CommandException {
        JsonNode a = argument(command);
        String id = jobId(a);
        String request = a.path("request").asText("");
        int slots = a.path("slots").asInt(1);
        if (request.isEmpty() || slots < 1) {
            throw new Session.CommandException("JOB_START needs \"request\" and \"slots\" of at least 1");
        }
        JobSpec spec;
        try {
            spec = spec(id, request, slots);
        } catch (ParseException e) {
            throw new Session.CommandException("request: " + e.getMessage());
        }
        Decision d = cluster.submit(spec, cluster.now());
        if (d.isRefused()) {
            throw new Session.CommandException(d.error());
        }
        if (d.result() == Decision.Result.WAITING) {
            // execd already started the job here: it cannot wait. Say why, and leave nothing behind.
            Explanation x = cluster.explain(spec.request(), config.host());
            cluster.finish(id, cluster.now());
            StringBuilder why = new StringBuilder();
            x.maps().stream().filter(m -> !m.canStart()).forEach(m -> why.append(why.length() > 0 ? "; " : "")
                    .append(m.map()).append(": ").append(m.verdict()));
            throw new Session.CommandException("job " + id + " cannot be granted now: " + why);
        }
        ObjectNode record = JSON.createObjectNode().put("op", "start").put("job", id).put("request", request)
                .put("slots", slots);
        try {
            journal.append(record.toString());
        } catch (IOException e) {
            cluster.finish(id, cluster.now()); // not on disk: not granted
            throw new Session.CommandException("journal: " + e.getMessage());
        }
        Map<String, String> env = cluster.environment(id, config.host()).orElse(Map.of());
        ObjectNode state = JSON.createObjectNode().put("job", id);
        state.set("grants", JSON.valueToTree(d.grant().byHost()));
        state.set("env", JSON.valueToTree(env));
        // The JSON, then the environment again as NAME=value arguments: the C hook needs no JSON parser.
        List<String> args = new java.util.ArrayList<>();
        args.add(state.toString());
        env.forEach((k, v) -> args.add(k + "=" + v));
        return List.of(Frame.of(command.tid(), Code.STATE.value(), args.toArray(new String[0])));
    }

    private List<Frame> jobEnd(Frame command) throws Session.CommandException {
        String id = jobId(argument(command));
        if (!cluster.isRunning(id)) {
            throw new Session.CommandException("job " + id + " holds nothing on " + config.host());
        }
        try {
            journal.append(JSON.createObjectNode().put("op", "end").put("job", id).toString());
        } catch (IOException e) {
            throw new Session.CommandException("journal: " + e.getMessage());
        }
        cluster.finish(id, cluster.now());
        return List.of();
    }

    private ObjectNode query() {
        ObjectNode q = JSON.createObjectNode().put("host", config.host());
        ObjectNode maps = q.putObject("maps");
        cluster.instances(config.host()).forEach((name, list) -> {
            var arr = maps.putArray(name);
            list.forEach(e -> arr.addObject().put("id", e.getKey()).put("holder", e.getValue()));
        });
        var jobs = q.putArray("jobs");
        cluster.runningJobs().forEach(jobs::add);
        return q;
    }

    private static JsonNode argument(Frame command) throws Session.CommandException {
        if (command.args().size() != 1) {
            throw new Session.CommandException("expected one JSON argument, got " + command.args().size());
        }
        try {
            JsonNode n = JSON.readTree(command.text(0));
            if (n == null || !n.isObject()) {
                throw new Session.CommandException("the argument is not a JSON object");
            }
            return n;
        } catch (JsonProcessingException e) {
            throw new Session.CommandException("the argument is not JSON: " + e.getOriginalMessage());
        }
    }

    private static String jobId(JsonNode a) throws Session.CommandException {
        String job = a.path("job").asText("");
        if (!job.matches("[A-Za-z0-9_.-]{1,100}")) {
            throw new Session.CommandException("\"job\" is missing or not a job id: '" + job + "'");
        }
        String task = a.path("task").asText("");
        return task.isEmpty() || task.equals("undefined") ? job : job + "." + task;
    }

    /** The socket's path, once serving. */
    public Path socket() {
        return server.path();
    }

    @Override
    public void close() throws IOException {
        if (server != null) {
            server.close();
        }
        journal.close();
    }
}
