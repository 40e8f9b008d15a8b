// rsmap simulate: drives the allocation core from a JSON Lines script and answers in JSON Lines.
package rsmap.sim;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Decision;
import rsmap.alloc.Explanation;
import rsmap.alloc.Grant;
import rsmap.alloc.JobSpec;
import rsmap.alloc.ReservationSpec;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;

/**
 * One operation per line, one answer per operation in order, each echoing {@code op} (and
 * job/ar/host), followed by a {@code start} line for every waiting job the operation let start. Time
 * is in seconds; an operation without {@code time} happens at the previous one's time. A malformed
 * line is answered {@code {"ok":false,"error":"line N: ..."}} and the run goes on.
 */
public final class Simulation {
    private static final Map<String, Set<String>> FIELDS = Map.of(
            "host", Set.of("op", "host", "complex_values", "time"),
            "submit", Set.of("op", "job", "request", "hosts", "master", "time", "runtime", "ar", "reserve"),
            "finish", Set.of("op", "job", "time"),
            "reserve", Set.of("op", "ar", "request", "hosts", "start", "end", "time"),
            "env", Set.of("op", "job", "host", "time"),
            "explain", Set.of("op", "request", "host", "time"));

    private final ObjectMapper json = new ObjectMapper()
            .setPropertyNamingStrategy(com.fasterxml.jackson.databind.PropertyNamingStrategies.SNAKE_CASE)
            .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    private final Cluster cluster;
    private final Limits limits;
    private final boolean human;

    /** A malformed line: reported as {"ok":false,"error":"line N: ..."}. */
    private static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message, null, false, false);
        }
    }

    public Simulation(ComplexTable table, Limits limits, boolean human) {
        this.cluster = new Cluster(table);
        this.limits = limits;
        this.human = human;
    }

    public Cluster cluster() {
        return cluster;
    }

    /** Runs a whole script. */
    public void run(BufferedReader in, Writer out) throws IOException {
        String line;
        int number = 0;
        while ((line = in.readLine()) != null) {
            number++;
            for (String answer : step(line, number)) {
                out.write(answer);
                out.write('\n');
            }
        }
        out.flush();
    }

    /** The answers to one line of the script (none for a blank line). */
    public List<String> step(String line, int number) {
        if (line.isBlank()) {
            return List.of();
        }
        try {
            JsonNode op = parse(line);
            return answer(op);
        } catch (Malformed e) {
            ObjectNode o = json.createObjectNode();
            o.put("ok", false);
            o.put("error", "line " + number + ": " + e.getMessage());
            return List.of(write(o));
        }
    }

    private JsonNode parse(String line) throws Malformed {
        if (line.length() > limits.maxInputChars()) {
            throw new Malformed("longer than " + limits.maxInputChars() + " characters");
        }
        JsonNode node;
        try {
            node = json.readTree(line);
        } catch (JsonProcessingException e) {
            throw new Malformed("not JSON: " + e.getOriginalMessage().replace('\n', ' '));
        }
        if (node == null || !node.isObject()) {
            throw new Malformed("an operation is a JSON object");
        }
        String op = text(node, "op", true);
        Set<String> allowed = FIELDS.get(op);
        if (allowed == null) {
            throw new Malformed("unknown op '" + op + "' (host, submit, finish, reserve, env, explain)");
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!allowed.contains(f)) {
                throw new Malformed("unknown field '" + f + "' for op " + op);
            }
        }
        return node;
    }

    private List<String> answer(JsonNode n) throws Malformed {
        String op = n.get("op").asText();
        long time = time(n, "time", cluster.now());
        switch (op) {
            case "host":
                return host(n, time);
            case "submit":
                return submit(n, time);
            case "finish":
                return finish(n, time);
            case "reserve":
                return reserve(n, time);
            case "env":
                return env(n, time);
            case "explain":
                return explain(n, time);
            default:
                throw new AssertionError(op);
        }
    }

    private List<String> host(JsonNode n, long time) throws Malformed {
        String host = text(n, "host", true);
        String values = text(n, "complex_values", true);
        ObjectNode o = echo("host", "host", host);
        Decision d;
        try {
            d = cluster.configure(host, ComplexValues.parse(values, cluster.table(), limits), time);
        } catch (ParseException e) {
            d = null;
            o.put("ok", false);
            o.put("error", e.getMessage());
        }
        return okAnswer(o, d);
    }

    private List<String> submit(JsonNode n, long time) throws Malformed {
        String job = text(n, "job", true);
        String request = text(n, "request", true);
        Map<String, Integer> hosts = hosts(n);
        String master = n.has("master") ? text(n, "master", true) : hosts.keySet().iterator().next();
        long runtime = n.has("runtime") ? time(n, "runtime", 0) : JobSpec.UNLIMITED;
        Optional<String> ar = n.has("ar") ? Optional.of(text(n, "ar", true)) : Optional.empty();
        boolean reserve = bool(n, "reserve");
        ObjectNode o = echo("submit", "job", job);
        Decision d;
        try {
            d = cluster.submit(new JobSpec(job, RequestList.parse(request, cluster.table(), limits), hosts, master,
                    runtime, ar, reserve), time);
        } catch (ParseException e) {
            o.put("result", "refused");
            o.put("error", e.getMessage());
            return List.of(write(o));
        }
        return resultAnswer(o, d);
    }

    private List<String> finish(JsonNode n, long time) throws Malformed {
        String job = text(n, "job", true);
        return okAnswer(echo("finish", "job", job), cluster.finish(job, time));
    }

    private List<String> reserve(JsonNode n, long time) throws Malformed {
        String ar = text(n, "ar", true);
        String request = text(n, "request", true);
        Map<String, Integer> hosts = hosts(n);
        if (!n.has("start") || !n.has("end")) {
            throw new Malformed("reserve needs start and end");
        }
        long start = time(n, "start", 0);
        long end = time(n, "end", 0);
        ObjectNode o = echo("reserve", "ar", ar);
        Decision d;
        try {
            d = cluster.reserve(new ReservationSpec(ar, RequestList.parse(request, cluster.table(), limits), hosts,
                    start, end), time);
        } catch (ParseException e) {
            o.put("result", "refused");
            o.put("error", e.getMessage());
            return List.of(write(o));
        }
        return resultAnswer(o, d);
    }

    private List<String> env(JsonNode n, long time) throws Malformed {
        String job = text(n, "job", true);
        String host = text(n, "host", true);
        ObjectNode o = echo("env", "job", job);
        o.put("host", host);
        // A query that fails changes nothing, not even the time: look ahead on a copy first.
        Cluster probe = time > cluster.now() ? cluster.copy() : cluster;
        Decision d = probe.advance(time);
        if (d.isRefused()) {
            return okAnswer(o, d);
        }
        Optional<Map<String, String>> env = probe.environment(job, host);
        if (env.isPresent() && probe != cluster) {
            d = cluster.advance(time);
        }
        if (env.isEmpty()) {
            o.put("ok", false);
            o.put("error", cluster.isRunning(job) ? "job " + job + " does not run on " + host
                    : "job " + job + " is not running");
        } else {
            ObjectNode e = o.putObject("env");
            env.get().forEach(e::put);
        }
        return withStarts(o, d);
    }

    private List<String> explain(JsonNode n, long time) throws Malformed {
        String request = text(n, "request", true);
        String host = text(n, "host", true);
        ObjectNode o = echo("explain", "host", host);
        o.put("request", request);
        RequestList parsed;
        try {
            parsed = RequestList.parse(request, cluster.table(), limits);
        } catch (ParseException e) {
            o.put("ok", false);
            o.put("error", e.getMessage());
            return List.of(write(o));
        }
        if (!cluster.hosts().containsKey(host)) {
            o.put("ok", false);
            o.put("error", "unknown host " + host);
            return List.of(write(o));
        }
        Decision d = cluster.advance(time);
        if (d.isRefused()) {
            return okAnswer(o, d);
        }
        Explanation x = cluster.explain(parsed, host);
        List<String> out = new ArrayList<>();
        if (human) {
            out.add(x.toHuman().stripTrailing());
        } else {
            o.put("can_start", x.canStart());
            o.set("maps", json.valueToTree(x.maps()));
            out.add(write(o));
        }
        starts(d, out);
        return out;
    }

    /** "result": granted (with grants), waiting (with reserved_start when planned) or refused (with error). */
    private List<String> resultAnswer(ObjectNode o, Decision d) {
        o.put("result", d.result().name().toLowerCase(java.util.Locale.ROOT));
        if (d.isRefused()) {
            o.put("error", d.error());
        } else if (d.result() == Decision.Result.GRANTED) {
            o.set("grants", grants(d.grant()));
        } else {
            d.reservedStart().ifPresent(t -> o.put("reserved_start", t));
        }
        return withStarts(o, d);
    }

    private ObjectNode echo(String op, String key, String value) {
        ObjectNode o = json.createObjectNode();
        o.put("op", op);
        o.put(key, value);
        return o;
    }

    private List<String> okAnswer(ObjectNode o, Decision d) {
        if (d == null) {
            return List.of(write(o));
        }
        o.put("ok", !d.isRefused());
        if (d.isRefused()) {
            o.put("error", d.error());
        }
        return withStarts(o, d);
    }

    private List<String> withStarts(ObjectNode o, Decision d) {
        List<String> out = new ArrayList<>();
        out.add(write(o));
        starts(d, out);
        return out;
    }

    private void starts(Decision d, List<String> out) {
        for (Decision.Started s : d.started()) {
            ObjectNode st = echo("start", "job", s.job());
            st.set("grants", grants(s.grant()));
            out.add(write(st));
        }
    }

    private ObjectNode grants(Grant g) {
        ObjectNode o = json.createObjectNode();
        g.byHost().forEach((host, maps) -> {
            ObjectNode h = o.putObject(host);
            maps.forEach((map, ids) -> {
                ArrayNode a = h.putArray(map);
                ids.forEach(a::add);
            });
        });
        return o;
    }

    private String write(ObjectNode o) {
        try {
            return json.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a tree of strings and numbers always serialises", e);
        }
    }

    private static String text(JsonNode n, String field, boolean required) throws Malformed {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            if (required) {
                throw new Malformed(n.path("op").asText("operation") + " needs '" + field + "'");
            }
            return null;
        }
        if (v.isTextual()) {
            if (v.asText().isEmpty()) {
                throw new Malformed("'" + field + "' is empty");
            }
            return v.asText();
        }
        if (v.isIntegralNumber()) {
            return v.asText(); // "job": 7 is job "7"
        }
        throw new Malformed("'" + field + "' must be a string");
    }

    private static long time(JsonNode n, String field, long dflt) throws Malformed {
        JsonNode v = n.get(field);
        if (v == null) {
            return dflt;
        }
        boolean whole = v.isIntegralNumber() && v.canConvertToLong()
                || v.isFloatingPointNumber() && v.asDouble() == Math.rint(v.asDouble()) && Math.abs(v.asDouble()) < 9e18;
        if (!whole || v.asLong() < 0) {
            throw new Malformed("'" + field + "' must be a whole number of seconds, 0 or more");
        }
        return v.asLong(); // 1000.0 and 1e3 are 1000
    }

    private static boolean bool(JsonNode n, String field) throws Malformed {
        JsonNode v = n.get(field);
        if (v == null) {
            return false;
        }
        if (!v.isBoolean()) {
            throw new Malformed("'" + field + "' must be true or false");
        }
        return v.asBoolean();
    }

    private static Map<String, Integer> hosts(JsonNode n) throws Malformed {
        JsonNode v = n.get("hosts");
        if (v == null || !v.isObject() || v.size() == 0) {
            throw new Malformed("'hosts' must be an object of host to slots, e.g. {\"node01\":1}");
        }
        Map<String, Integer> hosts = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isIntegralNumber() || !e.getValue().canConvertToInt() || e.getValue().asInt() < 1) {
                throw new Malformed("slots of host " + e.getKey() + " must be a whole number, 1 or more");
            }
            hosts.put(e.getKey(), e.getValue().asInt());
        }
        return hosts;
    }
}
