// The RFC 25 rules for a version-1 jobspec, checked on the JSON tree; each refusal names its place.
// Where RFC 25's text, its schema and flux-core's jobspec1.c differ, the comment says which rule is kept.
package rsmap.flux;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/** Reads a {@link Jobspec} from a tree, or refuses it with a {@link Where.Invalid}. */
final class JobspecReader {
    /** A resource map name, as the complex table spells one (ComplexTable's NAME). */
    static final Pattern MAP_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.\\-]*");
    private static final int MAX_NAME = 256;

    private JobspecReader() {
    }

    static Jobspec read(JsonNode tree) throws Where.Invalid {
        Where root = Where.ROOT;
        ObjectNode o = root.object(tree);
        // the version first, so that a version-999 jobspec hears that, not about its keys
        Where v = root.key("version");
        int version = v.integer(root.required(o, "version"));
        if (version != Jobspec.VERSION) {
            throw v.invalid("jobspec version " + version + " is not supported (only version 1, RFC 25)");
        }
        // RFC 25: the dictionary MUST contain these four keys; jobspec1.c refuses any other
        root.onlyKeys(o, Set.of("version", "resources", "tasks", "attributes"));
        Jobspec.Resource top = resources(root.key("resources"), root.required(o, "resources"));
        Jobspec.Task task = tasks(root.key("tasks"), root.required(o, "tasks"));
        Where a = root.key("attributes");
        ObjectNode attributes = a.object(root.required(o, "attributes"));
        a.onlyKeys(attributes, Set.of("system", "user"));
        ObjectNode system = system(a.key("system"), a.required(attributes, "system"));
        ObjectNode user = JsonNodeFactory.instance.objectNode();
        if (attributes.has("user")) {
            Where u = a.key("user");
            user = u.object(attributes.get("user"));
            if (user.isEmpty()) {
                throw u.invalid("if present, attributes.user must hold values (RFC 25)");
            }
        }
        String label = (top.type().equals("slot") ? top : top.with().get(0)).label();
        if (!task.slot().equals(label)) {
            // RFC 14 (which RFC 25 follows for tasks): slot SHALL match the label of a slot vertex
            throw root.key("tasks").index(0).key("slot").invalid("'" + task.slot()
                    + "' is not the label of the slot ('" + label + "'); RFC 14: slot SHALL match a slot's label");
        }
        return new Jobspec(top, task, system, user);
    }

    private static Jobspec.Resource resources(Where w, JsonNode n) throws Where.Invalid {
        w.array(n);
        if (n.size() != 1) {
            throw w.invalid("must list exactly one vertex, node or slot, not " + n.size() + " (RFC 25)");
        }
        Where first = w.index(0);
        ObjectNode vertex = first.object(n.get(0));
        String type = first.key("type").string(first.required(vertex, "type"));
        return switch (type) {
            case "node" -> node(first, vertex);
            case "slot" -> slot(first, vertex);
            default -> throw first.key("type").invalid("the top-level vertex must be node or slot, not '"
                    + clip(type) + "' (RFC 25)");
        };
    }

    private static Jobspec.Resource node(Where w, ObjectNode o) throws Where.Invalid {
        // RFC 25's text lets a node carry exclusive; label is for slots (schema and jobspec1.c agree)
        w.onlyKeys(o, Set.of("type", "count", "unit", "exclusive", "with"));
        int count = count(w, o, 1);
        Where with = w.key("with");
        JsonNode children = with.array(w.required(o, "with"));
        if (children.size() != 1) {
            throw with.invalid("a node holds exactly one slot, not " + children.size() + " vertices (RFC 25)");
        }
        Where child = with.index(0);
        ObjectNode slot = child.object(children.get(0));
        String type = child.key("type").string(child.required(slot, "type"));
        if (!type.equals("slot")) {
            throw child.key("type").invalid("a node holds a slot, not '" + clip(type)
                    + "' (RFC 25: node>slot>core)");
        }
        return new Jobspec.Resource("node", count, unit(w, o), "", exclusive(w, o), List.of(slot(child, slot)));
    }

    private static Jobspec.Resource slot(Where w, ObjectNode o) throws Where.Invalid {
        w.onlyKeys(o, Set.of("type", "count", "unit", "label", "exclusive", "with"));
        int count = count(w, o, 1);
        Where l = w.key("label");
        String label = l.string(w.required(o, "label"));
        if (label.isEmpty()) {
            throw l.invalid("a slot's label must not be empty (RFC 14)");
        }
        Where with = w.key("with");
        JsonNode children = with.array(w.required(o, "with"));
        if (children.isEmpty() || children.size() > 2) {
            throw with.invalid("a slot holds core and at most one gpu or resource map: 1 or 2 vertices, not "
                    + children.size() + " (RFC 25)");
        }
        List<Jobspec.Resource> leaves = new ArrayList<>();
        boolean core = false;
        for (int i = 0; i < children.size(); i++) {
            Jobspec.Resource leaf = leaf(with.index(i), children.get(i));
            boolean isCore = leaf.type().equals("core");
            if (isCore && core || !isCore && leaves.size() > (core ? 1 : 0)) {
                throw with.index(i).key("type").invalid("a slot holds one core and at most one gpu or resource "
                        + "map (RFC 25: slot>(core,gpu))");
            }
            core |= isCore;
            leaves.add(leaf);
        }
        if (!core) {
            throw with.invalid("a slot must hold core (RFC 25: the resource graph MUST contain core)");
        }
        return new Jobspec.Resource("slot", count, unit(w, o), label, exclusive(w, o), leaves);
    }

    /** core (count >= 1), or gpu or another resource map (count >= 0, as jobspec1.c allows gpu 0). */
    private static Jobspec.Resource leaf(Where w, JsonNode n) throws Where.Invalid {
        ObjectNode o = w.object(n);
        Where t = w.key("type");
        String type = t.string(w.required(o, "type"));
        if (type.equals("node") || type.equals("slot")) {
            throw t.invalid("a slot holds core and gpu or resource maps, not '" + type + "' (RFC 25)");
        }
        if (type.length() > MAX_NAME || !MAP_NAME.matcher(type).matches()) {
            throw t.invalid("'" + clip(type) + "' is neither core nor a resource map name");
        }
        w.onlyKeys(o, Set.of("type", "count", "unit"));
        int count = count(w, o, type.equals("core") ? 1 : 0);
        return new Jobspec.Resource(type, count, unit(w, o), "", Optional.empty(), List.of());
    }

    /** RFC 25: count is one integer; node, slot and core need at least 1. */
    private static int count(Where w, ObjectNode o, int min) throws Where.Invalid {
        Where c = w.key("count");
        int count = c.integer(w.required(o, "count"));
        if (count < min) {
            throw c.invalid("count must be >= " + min + ", not " + count);
        }
        return count;
    }

    private static Optional<String> unit(Where w, ObjectNode o) throws Where.Invalid {
        return o.has("unit") ? Optional.of(w.key("unit").string(o.get("unit"))) : Optional.empty();
    }

    private static Optional<Boolean> exclusive(Where w, ObjectNode o) throws Where.Invalid {
        if (!o.has("exclusive")) {
            return Optional.empty();
        }
        JsonNode x = o.get("exclusive");
        if (!x.isBoolean()) {
            throw w.key("exclusive").invalid("must be true or false, not " + Where.kind(x));
        }
        return Optional.of(x.booleanValue());
    }

    private static Jobspec.Task tasks(Where w, JsonNode n) throws Where.Invalid {
        w.array(n);
        if (n.size() != 1) {
            throw w.invalid("must hold exactly one task, not " + n.size() + " (RFC 25)");
        }
        Where t = w.index(0);
        ObjectNode task = t.object(n.get(0));
        t.onlyKeys(task, Set.of("command", "slot", "count"));
        Where c = t.key("command");
        JsonNode argv = c.array(t.required(task, "command"));
        if (argv.isEmpty()) {
            throw c.invalid("the command needs at least one string");
        }
        List<String> command = new ArrayList<>();
        for (int i = 0; i < argv.size(); i++) {
            command.add(c.index(i).string(argv.get(i)));
        }
        String slot = t.key("slot").string(t.required(task, "slot"));
        Where k = t.key("count");
        ObjectNode count = k.object(t.required(task, "count"));
        if (count.size() != 1) {
            throw k.invalid("must hold exactly one of per_slot and total (RFC 25)");
        }
        k.onlyKeys(count, Set.of("per_slot", "total"));
        if (count.has("per_slot")) {
            int perSlot = k.key("per_slot").integer(count.get("per_slot"));
            if (perSlot != 1) {
                throw k.key("per_slot").invalid("per_slot must be 1, not " + perSlot + " (RFC 25)");
            }
            return new Jobspec.Task(command, slot, true, 1);
        }
        int total = k.key("total").integer(count.get("total"));
        if (total < 1) {
            throw k.key("total").invalid("total must be >= 1, not " + total);
        }
        // RFC 25 also bounds total by the slot count, but flux-core's own valid_v1/use_case_2.1 asks for
        // 5 tasks on 4 slots: that bound is left to the scheduler, as flux-core does
        return new Jobspec.Task(command, slot, false, total);
    }

    /** attributes.system: duration required (RFC 25), the keys jobspec1.c checks have their types. */
    private static ObjectNode system(Where w, JsonNode n) throws Where.Invalid {
        ObjectNode o = w.object(n);
        if (o.isEmpty()) {
            throw w.invalid("if present, attributes.system must hold values (RFC 25)");
        }
        Where d = w.key("duration");
        double duration = d.number(w.required(o, "duration"));
        if (duration < 0) {
            throw d.invalid("duration must not be negative (RFC 25 schema: minimum 0)");
        }
        if (o.has("cwd")) {
            w.key("cwd").string(o.get("cwd"));
        }
        for (String dict : List.of("environment", "constraints")) {
            if (o.has(dict)) {
                w.key(dict).object(o.get(dict));
            }
        }
        if (o.has("dependencies")) {
            Where deps = w.key("dependencies");
            JsonNode list = deps.array(o.get("dependencies"));
            for (int i = 0; i < list.size(); i++) {
                Where e = deps.index(i);
                ObjectNode dep = e.object(list.get(i));
                e.key("scheme").string(e.required(dep, "scheme"));
                e.key("value").string(e.required(dep, "value"));
            }
        }
        if (o.has("shell")) {
            Where s = w.key("shell");
            ObjectNode shell = s.object(o.get("shell"));
            if (shell.has("options")) {
                s.key("options").object(shell.get("options"));
            }
        }
        return o;
    }

    private static String clip(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }
}
