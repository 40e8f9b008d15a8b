// The health of this daemon's instances (docs/health.md): every taint by map, identifier and source, and
// what the allocation core is told of them.
package rsmap.daemon.state;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.alloc.Cluster;
import rsmap.alloc.Decision;

/**
 * Several sources may taint one identifier at once (a drained card that also threw an Xid); it is healthy
 * again when the last goes. The core is told the one shown ({@link #shown}: the admin's, then the
 * check's, then NVML's). Mutable, under the daemon's lock.
 */
public final class HostHealth {
    /** "map id" to its taints by source. */
    private final Map<String, EnumMap<Taint.Source, Taint>> taints = new LinkedHashMap<>();

    private static String key(String map, String id) {
        return map + " " + id;
    }

    /** The taint shown for {@code map}/{@code id}: empty when healthy. */
    public Optional<Taint> shown(String map, String id) {
        EnumMap<Taint.Source, Taint> all = taints.get(key(map, id));
        return all == null || all.isEmpty() ? Optional.empty() : Optional.of(all.values().iterator().next());
    }

    /** The taint of {@code source} on {@code map}/{@code id}, if any. */
    public Optional<Taint> of(String map, String id, Taint.Source source) {
        EnumMap<Taint.Source, Taint> all = taints.get(key(map, id));
        return all == null ? Optional.empty() : Optional.ofNullable(all.get(source));
    }

    /** Sets {@code t}, replacing the same source's; the core follows (its decision). */
    public Optional<Decision> put(Taint t, Cluster core, String host) {
        taints.computeIfAbsent(key(t.map(), t.id()), k -> new EnumMap<>(Taint.Source.class)).put(t.source(), t);
        return tell(core, host, t.map(), t.id());
    }

    /**
     * Clears {@code source}'s taint; the core follows. Its decision (waiting reallocs it let through are in
     * the core's outbox), or empty when there was no such taint.
     */
    public Optional<Decision> remove(String map, String id, Taint.Source source, Cluster core, String host) {
        EnumMap<Taint.Source, Taint> all = taints.get(key(map, id));
        if (all == null || all.remove(source) == null) {
            return Optional.empty();
        }
        if (all.isEmpty()) {
            taints.remove(key(map, id));
        }
        return tell(core, host, map, id);
    }

    /** Every taint, in the order set. */
    List<Taint> all() {
        List<Taint> out = new ArrayList<>();
        taints.values().forEach(m -> out.addAll(m.values()));
        return out;
    }

    /**
     * The taints that survive a restart (the admin's, the check's and a failed MIG creation's; NVML's are learnt
     * again from the card).
     */
    public List<Taint> persistent() {
        return all().stream().filter(t -> t.source() != Taint.Source.NVML).toList();
    }

    /**
     * The taints set with {@code t} by the one failure that set it: its source's, with its reason and time (a
     * failed MIG creation taints every instance of its card at once; one undrain clears them together).
     */
    public List<Taint> alike(Taint t) {
        return all().stream().filter(x -> x.source() == t.source() && x.reason().equals(t.reason())
                && x.since().equals(t.since())).toList();
    }

    /** {@code "ok"} or the shown taint's object, as QUERY, STATE and REGISTER show an instance. */
    public JsonNode json(String map, String id) {
        return shown(map, id).<JsonNode>map(Taint::json).orElse(TextNode.valueOf("ok"));
    }

    /** Tells {@code core} (a new configuration's) every taint of {@code host}; identifiers it lacks are left out. */
    void applyTo(Cluster core, String host) {
        for (EnumMap<Taint.Source, Taint> all : taints.values()) {
            Taint t = all.values().iterator().next();
            tell(core, host, t.map(), t.id());
        }
    }

    /** The core's decision; empty without a core (a journal's health record before its configuration). */
    private Optional<Decision> tell(Cluster core, String host, String map, String id) {
        if (core == null) {
            return Optional.empty();
        }
        Optional<Taint> t = shown(map, id);
        // The host's own map, else the global host's (a daemon without authority serves global maps itself).
        String where = core.instances(host).containsKey(map) ? host : Cluster.GLOBAL;
        // refused for an identifier not configured: nothing to do
        return Optional.of(t.isPresent() ? core.taint(where, map, id, t.get().why(), core.now())
                : core.untaint(where, map, id, core.now()));
    }
}
