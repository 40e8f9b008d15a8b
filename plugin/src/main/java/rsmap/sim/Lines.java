// The answer lines of rsmap simulate: echoes, grants, start lines and realloc answer lines, as JSON.
package rsmap.sim;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.function.Supplier;
import rsmap.alloc.Decision;
import rsmap.alloc.Grant;
import rsmap.realloc.Answer;
import rsmap.realloc.Event;
import rsmap.realloc.RDelta;

/** Renders answers; keys keep the order they are put in, which the golden files rely on. */
final class Lines {
    private final ObjectMapper json;
    /** The configured hosts, in order: the ranks of R deltas ({@link RDelta}). */
    private final Supplier<List<String>> hosts;
    /** Adds to a start line what placement chose (hosts, alternative, why); nothing by default. */
    private java.util.function.BiConsumer<String, ObjectNode> onStart = (job, line) -> { };

    Lines(ObjectMapper json, Supplier<List<String>> hosts) {
        this.json = json;
        this.hosts = hosts;
    }

    void onStart(java.util.function.BiConsumer<String, ObjectNode> describe) {
        onStart = describe;
    }

    ObjectMapper json() {
        return json;
    }

    ObjectNode echo(String op, String key, String value) {
        ObjectNode o = json.createObjectNode();
        o.put("op", op);
        o.put(key, value);
        return o;
    }

    /** A start line for each job started, a realloc answer line for each realloc answered, in order. */
    void events(List<Event> events, List<String> out) {
        for (Event e : events) {
            switch (e.kind()) {
                case START:
                    Decision.Started s = ((Event.Start) e).started();
                    ObjectNode st = echo("start", "job", s.job());
                    st.set("grants", grants(s.grant()));
                    onStart.accept(s.job(), st);
                    out.add(write(st));
                    break;
                case REPLY:
                    out.add(write(answer(((Event.Reply) e).answer())));
                    break;
                default:
                    throw new AssertionError(e.kind());
            }
        }
    }

    /**
     * {@code {"op":"realloc","job":J,"tag":T,"alloc_id":N,"type":0,"added":{...},"removed":{...}}}, or with
     * {@code "error"} for the other types; {@code "R_delta_add"} and {@code "R_delta_sub"} (RFC 51, R version 1)
     * follow {@code added} and {@code removed}.
     */
    ObjectNode answer(Answer a) {
        ObjectNode o = echo("realloc", "job", a.job());
        o.put("tag", a.tag());
        o.put("alloc_id", a.allocId());
        o.put("type", a.type().code());
        if (!a.added().isEmpty()) {
            o.set("added", grants(a.added()));
        }
        if (!a.removed().isEmpty()) {
            o.set("removed", grants(a.removed()));
        }
        if (!a.added().isEmpty()) {
            o.set("R_delta_add", RDelta.of(a.added(), a.addedAt(), hosts.get()).toJson());
        }
        if (!a.removed().isEmpty()) {
            o.set("R_delta_sub", RDelta.of(a.removed(), a.removedAt(), hosts.get()).toJson());
        }
        if (!a.error().isEmpty()) {
            o.put("error", a.error());
        }
        return o;
    }

    ObjectNode grants(Grant g) {
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

    String write(ObjectNode o) {
        try {
            return json.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a tree of strings and numbers always serialises", e);
        }
    }
}
