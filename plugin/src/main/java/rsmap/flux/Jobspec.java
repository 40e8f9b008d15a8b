// A Flux jobspec version 1 (RFC 25, with RFC 14's counts): one node or slot, one task, a duration.
// Resource maps stand where RFC 25 allows gpu: {"type":"gpu","count":2} reads against the host's gpu map.
package rsmap.flux;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import rsmap.Limits;
import rsmap.ParseException;

/**
 * A valid version-1 jobspec. {@link #parse} reads JSON or YAML and refuses with the JSON path of the
 * problem ({@code $.resources[0].with[0].count: ...}); {@link #toString()} is the canonical JSON.
 *
 * @param resources  the one top-level vertex, {@code node} (holding one slot) or {@code slot}
 * @param task       the one task
 * @param system     {@code attributes.system}, holding at least {@code duration}
 * @param user       {@code attributes.user}; empty when absent (RFC 25 refuses an empty one)
 */
public record Jobspec(Resource resources, Task task, ObjectNode system, ObjectNode user) {
    public static final int VERSION = 1;

    public Jobspec {
        Objects.requireNonNull(resources);
        Objects.requireNonNull(task);
        if (!resources.type().equals("node") && !resources.type().equals("slot")) {
            throw new IllegalArgumentException("the top-level vertex is node or slot (RFC 25)");
        }
        if (system.get("duration") == null || !system.get("duration").isNumber()) {
            throw new IllegalArgumentException("attributes.system.duration is required (RFC 25)");
        }
        system = system.deepCopy();
        user = user.deepCopy();
    }

    public static Jobspec parse(String text) throws ParseException {
        return parse(text, Limits.DEFAULT);
    }

    public static Jobspec parse(String text, Limits limits) throws ParseException {
        JsonNode tree = Documents.read(text, limits);
        try {
            return JobspecReader.read(tree);
        } catch (Where.Invalid e) {
            throw Documents.refuse(text, e, limits);
        }
    }

    @Override
    public ObjectNode system() {
        return system.deepCopy();
    }

    @Override
    public ObjectNode user() {
        return user.deepCopy();
    }

    /** {@code attributes.system.duration} in seconds; 0 means unlimited (RFC 14). */
    public double duration() {
        return system.get("duration").doubleValue();
    }

    /** The slot vertex: the top-level one or the node's only child. */
    public Resource slot() {
        return resources.type().equals("slot") ? resources : resources.with().get(0);
    }

    /** The node count, 0 when the jobspec names no node (the slots may then share nodes). */
    public int nodes() {
        return resources.type().equals("node") ? resources.count() : 0;
    }

    /** How many slots in all: nodes x slots per node, or the slot count. */
    public long slots() {
        return resources.type().equals("node") ? (long) resources.count() * slot().count() : slot().count();
    }

    /** Cores per slot. */
    public int cores() {
        return slot().with().stream().filter(r -> r.type().equals("core")).mapToInt(Resource::count).sum();
    }

    /** Per slot: resource map name (gpu included) -> count; empty when the slot holds cores only. */
    public Map<String, Integer> maps() {
        Map<String, Integer> m = new LinkedHashMap<>();
        for (Resource r : slot().with()) {
            if (!r.type().equals("core")) {
                m.put(r.type(), r.count());
            }
        }
        return m;
    }

    /** The canonical JSON tree: version, resources, tasks, attributes, each vertex's keys in one order. */
    public ObjectNode toJson() {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode o = f.objectNode();
        o.put("version", VERSION);
        o.putArray("resources").add(resources.toJson());
        o.putArray("tasks").add(task.toJson());
        ObjectNode attributes = o.putObject("attributes");
        attributes.set("system", system.deepCopy());
        if (!user.isEmpty()) {
            attributes.set("user", user.deepCopy());
        }
        return o;
    }

    /** The canonical JSON, one line. */
    @Override
    public String toString() {
        return toJson().toString();
    }

    /**
     * A resource vertex. {@code type} is node, slot, core, or the name of a resource map (gpu is one).
     *
     * @param label      the slot's label; empty for the other types
     * @param exclusive  present only when the jobspec says
     * @param unit       present only when the jobspec says
     * @param with       the children: node holds one slot, slot holds one core and at most one map
     */
    public record Resource(String type, int count, Optional<String> unit, String label,
                           Optional<Boolean> exclusive, List<Resource> with) {
        public Resource {
            Objects.requireNonNull(type);
            Objects.requireNonNull(unit);
            Objects.requireNonNull(label);
            Objects.requireNonNull(exclusive);
            with = List.copyOf(with);
            if (count < 0) {
                throw new IllegalArgumentException("count must not be negative");
            }
        }

        /** A leaf: core or a resource map. */
        public static Resource leaf(String type, int count) {
            return new Resource(type, count, Optional.empty(), "", Optional.empty(), List.of());
        }

        ObjectNode toJson() {
            ObjectNode o = JsonNodeFactory.instance.objectNode();
            o.put("type", type);
            o.put("count", count);
            unit.ifPresent(u -> o.put("unit", u));
            if (type.equals("slot")) {
                o.put("label", label);
            }
            exclusive.ifPresent(x -> o.put("exclusive", x));
            if (!with.isEmpty()) {
                ArrayNode a = o.putArray("with");
                with.forEach(r -> a.add(r.toJson()));
            }
            return o;
        }
    }

    /**
     * The task. RFC 25: {@code count} is either {@code per_slot} (then 1) or {@code total}.
     *
     * @param command  the argv, at least one string
     * @param slot     the label of the slot vertex it runs in
     * @param perSlot  true for {@code per_slot}, false for {@code total}
     * @param count    1 for {@code per_slot}, else the total number of tasks
     */
    public record Task(List<String> command, String slot, boolean perSlot, int count) {
        public Task {
            command = List.copyOf(command);
            Objects.requireNonNull(slot);
            if (command.isEmpty() || count < 1 || perSlot && count != 1) {
                throw new IllegalArgumentException("a task has a command and per_slot 1 or a total >= 1");
            }
        }

        ObjectNode toJson() {
            ObjectNode o = JsonNodeFactory.instance.objectNode();
            ArrayNode argv = o.putArray("command");
            command.forEach(argv::add);
            o.put("slot", slot);
            o.putObject("count").put(perSlot ? "per_slot" : "total", count);
            return o;
        }
    }
}
