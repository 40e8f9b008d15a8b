// Cards out of use for new grants after a failed MIG creation: the seam to the host's health model.
package rsmap.daemon;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import rsmap.log.Log;

/**
 * A card whose slice could not be created is tainted: none of its instances (whole card or slices) is granted
 * again until RELOAD or a restart clears it; jobs holding it keep running. The health model of
 * docs/gpus.md (per-instance taints from NVML events, checks and the admin) takes this over where it is
 * built: {@link #taint} is the one call MIG makes.
 */
class CardTaints {
    private final Map<String, String> byCard = new LinkedHashMap<>();
    private final LogBook log;

    CardTaints(LogBook log) {
        this.log = log;
    }

    /** Card {@code uuid} gets no new grant, for {@code reason}; logged. */
    void taint(String uuid, String reason) {
        byCard.put(uuid, reason);
        log.note(Log.Level.WARNING, "card " + uuid + " tainted: " + reason + " (no new grant until RELOAD or restart)");
    }

    /** Why card {@code uuid} is tainted, if it is. */
    Optional<String> reason(String uuid) {
        return Optional.ofNullable(byCard.get(uuid));
    }

    /** RELOAD: every card may be granted again. */
    void clear() {
        byCard.clear();
    }

    /** The taints now, to put back with {@link #restore} (a refused RELOAD clears none). */
    Map<String, String> saved() {
        return Map.copyOf(byCard);
    }

    void restore(Map<String, String> saved) {
        byCard.clear();
        byCard.putAll(saved);
    }
}
