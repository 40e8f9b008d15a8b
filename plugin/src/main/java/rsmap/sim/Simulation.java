// rsmap simulate: drives the allocation core from a JSON Lines script and answers in JSON Lines.
package rsmap.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Decision;
import rsmap.alloc.Explanation;
import rsmap.alloc.JobSpec;
import rsmap.alloc.ReservationSpec;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.realloc.Reallocs;
import rsmap.request.RequestList;

/**
 * One operation per line, one answer per operation in order, each echoing {@code op} (and
 * job/ar/host), followed by a {@code start} line for every waiting job the operation let start. Time
 * is in seconds; an operation without {@code time} happens at the previous one's time. A malformed
 * line is answered {@code {"ok":false,"error":"line N: ..."}} and the run goes on.
 */
public final class Simulation {
    private final ObjectMapper json = new ObjectMapper()
            .setPropertyNamingStrategy(com.fasterxml.jackson.databind.PropertyNamingStrategies.SNAKE_CASE)
            .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    private final Cluster cluster;
    /** Each host's exclusions from its mig_cards (MigCards): a card and its slices are one pool. */
    private final Map<String, rsmap.alloc.Exclusions> migExclusions = new java.util.HashMap<>();
    private final Reallocs reallocs;
    private final Lines lines;
    private final ReallocOps reallocOps;
    private final NodeOps nodeOps;
    private final PlaceOps placeOps;
    private final HealthOps healthOps;
    private final Limits limits;
    private final boolean human;

    public Simulation(ComplexTable table, Limits limits, boolean human) {
        this.cluster = new Cluster(table);
        cluster.setExclusionRule((h, v) -> migExclusions.getOrDefault(h, rsmap.alloc.Exclusions.NONE));
        this.lines = new Lines(json, () -> List.copyOf(cluster.hosts().keySet()));
        this.reallocs = new Reallocs(cluster);
        this.reallocOps = new ReallocOps(reallocs, lines, limits);
        this.nodeOps = new NodeOps(lines, limits);
        this.placeOps = new PlaceOps(cluster, nodeOps, lines, limits);
        this.lines.onStart(placeOps::describe);
        this.healthOps = new HealthOps(cluster, reallocs, lines);
        this.limits = limits;
        this.human = human;
    }

    public Cluster cluster() {
        return cluster;
    }

    public Reallocs reallocs() {
        return reallocs;
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
            JsonNode op = Script.parse(json, line, limits);
            return answer(op);
        } catch (Malformed e) {
            ObjectNode o = json.createObjectNode();
            o.put("ok", false);
            o.put("error", "line " + number + ": " + e.getMessage());
            return List.of(lines.write(o));
        }
    }

    private List<String> answer(JsonNode n) throws Malformed {
        String op = n.get("op").asText();
        long time = Fields.time(n, "time", cluster.now());
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
            case "realloc":
                return reallocOps.realloc(n, time);
            case "release":
                return reallocOps.release(n, time);
            case "realloc_cancel":
                return reallocOps.cancel(n, time);
            case "settings":
                return reallocOps.settings(n);
            case "attribute-types":
                return nodeOps.declare(n);
            case "filter":
                return nodeOps.filter(n);
            case "policy":
                return placeOps.policy(n);
            case "taint":
                return healthOps.taint(n, time);
            case "untaint":
                return healthOps.untaint(n, time);
            default:
                throw new AssertionError(op);
        }
    }

    /**
     * Configures a host: its complex_values (required for a new host unless it has only slots or
     * attributes, when it is NONE; kept when left out), its slots and attributes (kept when left
     * out). A refusal changes none of them.
     */
    private List<String> host(JsonNode n, long time) throws Malformed {
        String host = Fields.text(n, "host", true);
        boolean known = cluster.hosts().containsKey(host);
        boolean nodeOnly = n.has("slots") || n.has("attributes");
        String values = Fields.text(n, "complex_values", !nodeOnly);
        if (n.has("mig_cards")) {
            MigCards.Built mig = MigCards.build(n, cluster.table());
            values = values == null || values.isBlank() || values.equalsIgnoreCase("NONE") ? mig.entry()
                    : values + "," + mig.entry();
            migExclusions.put(host, mig.exclusions());
        }
        ObjectNode o = lines.echo("host", "host", host);
        Decision d;
        try {
            rsmap.node.Node node = nodeOps.read(n, host);
            ComplexValues parsed = values == null ? null : ComplexValues.parse(values, cluster.table(), limits);
            if (parsed == null && known) {
                d = cluster.advance(time);
            } else {
                ComplexValues none = ComplexValues.parse("NONE", cluster.table(), limits);
                d = cluster.configure(host, parsed == null ? none : parsed, time);
            }
            if (!d.isRefused()) {
                nodeOps.put(node);
            }
        } catch (ParseException e) {
            d = null;
            o.put("ok", false);
            o.put("error", e.getMessage());
        }
        List<String> out = new ArrayList<>(okAnswer(o, d));
        if (d != null && !d.isRefused()) {
            // the host's slots limit every submit; a raised capacity may let waiting jobs start.
            lines.events(reallocs.events(cluster.setSlots(host, nodeOps.byName().get(host).slots(), time)), out);
        }
        return out;
    }

    private List<String> submit(JsonNode n, long time) throws Malformed {
        String job = Fields.text(n, "job", true);
        if (PlaceOps.isPlaced(n)) {
            return placed(n, job, time);
        }
        for (String f : List.of("filter", "group", "group_values", "whole_hosts", "label")) {
            if (n.has(f)) {
                throw new Malformed("'" + f + "' goes with 'slots' (placement), not with fixed 'hosts'");
            }
        }
        // a job may ask for slots only; without hosts the request is still asked for first.
        String request = n.has("hosts") && !n.has("request") ? null : Fields.text(n, "request", true);
        Map<String, Integer> hosts = Fields.hosts(n);
        String master = n.has("master") ? Fields.text(n, "master", true) : hosts.keySet().iterator().next();
        long runtime = n.has("runtime") ? Fields.time(n, "runtime", 0) : JobSpec.UNLIMITED;
        Optional<String> ar = n.has("ar") ? Optional.of(Fields.text(n, "ar", true)) : Optional.empty();
        boolean reserve = Fields.bool(n, "reserve");
        ObjectNode o = lines.echo("submit", "job", job);
        Decision d;
        try {
            RequestList parsed = request == null ? new RequestList(List.of())
                    : RequestList.parse(request, cluster.table(), limits);
            d = cluster.submit(new JobSpec(job, parsed, hosts, master, runtime, ar, reserve), time);
        } catch (ParseException e) {
            o.put("result", "refused");
            o.put("error", e.getMessage());
            return List.of(lines.write(o));
        }
        return resultAnswer(o, d);
    }

    /** a submit with slots or alternatives, placed by rsmap.place. */
    private List<String> placed(JsonNode n, String job, long time) throws Malformed {
        if (n.has("master")) {
            throw new Malformed("'master' goes with fixed 'hosts'; a placed job's master is its first host");
        }
        long runtime = n.has("runtime") ? Fields.time(n, "runtime", 0) : JobSpec.UNLIMITED;
        boolean reserve = Fields.bool(n, "reserve");
        ObjectNode o = lines.echo("submit", "job", job);
        Decision d;
        try {
            d = placeOps.submit(placeOps.read(n, job, runtime, reserve), time);
        } catch (ParseException e) {
            o.put("result", "refused");
            o.put("error", e.getMessage());
            return List.of(lines.write(o));
        }
        result(o, d);
        if (!d.isRefused()) {
            placeOps.describe(job, o);
        }
        return withStarts(o, d);
    }

    private List<String> finish(JsonNode n, long time) throws Malformed {
        String job = Fields.text(n, "job", true);
        // JOB_END: the job's waiting reallocs are answered CANCEL, pending take-aways are freed too.
        List<String> out = reallocOps.okLine(lines.echo("finish", "job", job), reallocs.finish(job, time));
        placeOps.finished(job);
        return out;
    }

    private List<String> reserve(JsonNode n, long time) throws Malformed {
        String ar = Fields.text(n, "ar", true);
        String request = Fields.text(n, "request", true);
        Map<String, Integer> hosts = Fields.hosts(n);
        if (!n.has("start") || !n.has("end")) {
            throw new Malformed("reserve needs start and end");
        }
        long start = Fields.time(n, "start", 0);
        long end = Fields.time(n, "end", 0);
        ObjectNode o = lines.echo("reserve", "ar", ar);
        Decision d;
        try {
            d = cluster.reserve(new ReservationSpec(ar, RequestList.parse(request, cluster.table(), limits), hosts,
                    start, end), time);
        } catch (ParseException e) {
            o.put("result", "refused");
            o.put("error", e.getMessage());
            return List.of(lines.write(o));
        }
        return resultAnswer(o, d);
    }

    private List<String> env(JsonNode n, long time) throws Malformed {
        String job = Fields.text(n, "job", true);
        String host = Fields.text(n, "host", true);
        ObjectNode o = lines.echo("env", "job", job);
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
            env = cluster.environment(job, host); // what the job uses now: a waiting realloc may have been met
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
        String request = Fields.text(n, "request", true);
        String host = Fields.text(n, "host", true);
        ObjectNode o = lines.echo("explain", "host", host);
        o.put("request", request);
        RequestList parsed;
        try {
            parsed = RequestList.parse(request, cluster.table(), limits);
        } catch (ParseException e) {
            o.put("ok", false);
            o.put("error", e.getMessage());
            return List.of(lines.write(o));
        }
        if (!cluster.hosts().containsKey(host)) {
            o.put("ok", false);
            o.put("error", "unknown host " + host);
            return List.of(lines.write(o));
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
            out.add(lines.write(o));
        }
        lines.events(reallocs.events(d), out);
        return out;
    }

    /** "result": granted (with grants), waiting (with reserved_start when planned) or refused (with error). */
    private List<String> resultAnswer(ObjectNode o, Decision d) {
        result(o, d);
        return withStarts(o, d);
    }

    private void result(ObjectNode o, Decision d) {
        o.put("result", d.result().name().toLowerCase(java.util.Locale.ROOT));
        if (d.isRefused()) {
            o.put("error", d.error());
        } else if (d.result() == Decision.Result.GRANTED) {
            o.set("grants", lines.grants(d.grant()));
        } else {
            d.reservedStart().ifPresent(t -> o.put("reserved_start", t));
        }
    }

    private List<String> okAnswer(ObjectNode o, Decision d) {
        if (d == null) {
            return List.of(lines.write(o));
        }
        o.put("ok", !d.isRefused());
        if (d.isRefused()) {
            o.put("error", d.error());
        }
        return withStarts(o, d);
    }

    private List<String> withStarts(ObjectNode o, Decision d) {
        List<String> out = new ArrayList<>();
        out.add(lines.write(o));
        lines.events(reallocs.events(d), out);
        return out;
    }
}
