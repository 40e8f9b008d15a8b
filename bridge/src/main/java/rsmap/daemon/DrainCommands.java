// DRAIN and UNDRAIN (docs/protocol.md): the admin's taint of an instance, set and cleared (UNDRAIN clears a
// failed MIG creation's too); root and the admin only (Access), journaled, kept across a restart.
package rsmap.daemon;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import rsmap.daemon.health.Health;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Refusal;
import rsmap.daemon.state.Taint;
import rsmap.wire.Code;
import rsmap.wire.Frame;

/**
 * {@code DRAIN {"map":"gpu","id":"0","reason":"fan"}} and {@code UNDRAIN {"map":"gpu","id":"0"}}: STATE
 * {@code {"map","id","changed","health"}} - changed false when it was drained (undrained) already alike.
 * A map or identifier that is not here, or a reason that is not one printable line, is refused.
 */
final class DrainCommands {
    static final Set<String> KEYS = Set.of("map", "id", "reason");

    private DrainCommands() {
    }

    /** Adds DRAIN and UNDRAIN to a role's handlers. */
    static void add(Map<Code, Commands.Handler> h, Health health, HostState s) {
        h.put(Code.DRAIN, (c, session) -> change(c, health, s, true));
        h.put(Code.UNDRAIN, (c, session) -> change(c, health, s, false));
    }

    private static List<Frame> change(Frame c, Health health, HostState s, boolean drain)
            throws Refusal {
        String name = drain ? Code.DRAIN.name() : Code.UNDRAIN.name();
        Args a = Args.of(name, c, KEYS);
        String map = required(a, "map");
        String id = required(a, "id");
        String reason = a.string("reason", "").strip();
        if (reason.length() > Taint.MAX_REASON || reason.chars().anyMatch(ch -> ch < 0x20 || ch == 0x7f)) {
            throw Refusal.malformed(name + ": \"reason\" is one printable line of at most "
                    + Taint.MAX_REASON + " characters");
        }
        boolean changed;
        if (drain) {
            changed = health.taint(new Taint(map, id, Taint.Source.ADMIN, reason.isEmpty() ? "drained" : reason,
                    Instant.now()), false);
        } else { // the admin's taint, and a failed creation's on its whole card (docs/health.md): NVML's and the check's stay
            boolean admin = health.untaint(map, id, Taint.Source.ADMIN, false);
            changed = health.untaintCreation(map, id, false) || admin;
        }
        var answer = JsonNodeFactory.instance.objectNode().put("map", map).put("id", id).put("changed", changed);
        answer.set("health", s.health.json(map, id));
        return List.of(Frame.of(c.tid(), Code.STATE.value(), answer.toString()));
    }

    private static String required(Args a, String key) throws Refusal {
        String v = a.string(key, "");
        if (v.isEmpty()) {
            throw Refusal.malformed(a.command() + " needs \"" + key + "\"");
        }
        return v;
    }
}
