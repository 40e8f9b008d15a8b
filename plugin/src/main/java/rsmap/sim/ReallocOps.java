// The realloc operations of rsmap simulate: realloc, release, realloc_cancel and settings (issue 13).
package rsmap.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Grant;
import rsmap.realloc.Event;
import rsmap.realloc.InstanceNames;
import rsmap.realloc.Outcome;
import rsmap.realloc.Policy;
import rsmap.realloc.ReallocRequest;
import rsmap.realloc.Reallocs;

/**
 * {@code realloc} answers with its RFC 51 answer (alloc_id, type, added/removed or error) or
 * {@code "result":"waiting"}, and a waiting one's answer comes later, at the step that decides it, like a
 * job's start line. {@code release} and {@code realloc_cancel} answer ok or not; {@code settings} turns
 * reallocation on or off and picks the policy.
 */
final class ReallocOps {
    private final Reallocs reallocs;
    private final Lines lines;
    private final Limits limits;

    ReallocOps(Reallocs reallocs, Lines lines, Limits limits) {
        this.reallocs = reallocs;
        this.lines = lines;
        this.limits = limits;
    }

    List<String> realloc(JsonNode n, long time) throws Malformed {
        String job = Fields.text(n, "job", true);
        String tag = Fields.text(n, "tag", true);
        ReallocRequest request;
        try {
            request = ReallocRequest.read(n);
        } catch (ParseException e) {
            throw new Malformed(e.problem());
        }
        Outcome o;
        try {
            o = reallocs.realloc(request.resolve(job, tag, reallocs.cluster(), limits), time);
        } catch (ParseException e) {
            return List.of(lines.write(lines.answer(reallocs.refuse(job, tag, e.getMessage()))));
        }
        List<String> out = new ArrayList<>();
        if (o.answer().isPresent()) {
            out.add(lines.write(lines.answer(o.answer().get())));
        } else {
            ObjectNode w = lines.echo("realloc", "job", job);
            w.put("tag", tag);
            w.put("result", "waiting");
            out.add(lines.write(w));
        }
        lines.events(o.events(), out);
        return out;
    }

    /** The instances given back, as {@code ids} or as {@code R}; an R that does not fit is refused like them. */
    List<String> release(JsonNode n, long time) throws Malformed {
        String job = Fields.text(n, "job", true);
        InstanceNames named;
        try {
            named = InstanceNames.read(n);
        } catch (ParseException e) {
            throw new Malformed(e.problem());
        }
        if (named.isEmpty()) {
            throw new Malformed("release needs 'ids' or 'R'");
        }
        ObjectNode line = lines.echo("release", "job", job);
        Grant ids;
        try {
            ids = named.resolve(reallocs.cluster(), limits);
        } catch (ParseException e) {
            line.put("ok", false);
            line.put("error", e.getMessage());
            return List.of(lines.write(line));
        }
        return okLine(line, reallocs.release(job, ids, time));
    }

    /** The cancelled realloc's answer (type 2), then the ok line. */
    List<String> cancel(JsonNode n, long time) throws Malformed {
        String job = Fields.text(n, "job", true);
        String tag = Fields.text(n, "tag", true);
        Outcome o = reallocs.cancel(job, tag, time);
        List<String> out = new ArrayList<>();
        o.answer().ifPresent(a -> out.add(lines.write(lines.answer(a))));
        ObjectNode line = lines.echo("realloc_cancel", "job", job);
        line.put("tag", tag);
        out.addAll(okLine(line, o));
        return out;
    }

    List<String> settings(JsonNode n) throws Malformed {
        if (!n.has("realloc") && !n.has("realloc_policy")) {
            throw new Malformed("settings needs 'realloc' or 'realloc_policy'");
        }
        ObjectNode line = lines.json().createObjectNode();
        line.put("op", "settings");
        Optional<Policy> policy = Optional.empty();
        if (n.has("realloc_policy")) {
            String name = Fields.text(n, "realloc_policy", true);
            policy = Policy.named(name);
            if (policy.isEmpty()) {
                line.put("ok", false);
                line.put("error", "unknown realloc_policy '" + name + "' (fifo, smallest)");
                return List.of(lines.write(line));
            }
        }
        boolean on = n.has("realloc") ? Fields.bool(n, "realloc") : reallocs.enabled();
        policy.ifPresent(reallocs::setPolicy);
        List<Event> answered = reallocs.setEnabled(on);
        line.put("realloc", reallocs.enabled());
        line.put("realloc_policy", reallocs.policy().name());
        line.put("ok", true);
        List<String> out = new ArrayList<>();
        out.add(lines.write(line));
        lines.events(answered, out);
        return out;
    }

    /** {@code "ok":true} and the events, or {@code "ok":false} with the error. */
    List<String> okLine(ObjectNode line, Outcome o) {
        line.put("ok", o.ok());
        if (!o.ok()) {
            line.put("error", o.error());
        }
        List<String> out = new ArrayList<>();
        out.add(lines.write(line));
        lines.events(o.events(), out);
        return out;
    }
}
