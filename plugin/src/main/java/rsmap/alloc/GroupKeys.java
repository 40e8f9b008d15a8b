// The group a job's scope=job requests are held to, map by map: chosen once for the whole job (at its
// first host) and pinned on every other host, so that all its hosts grant instances of one group.
package rsmap.alloc;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import rsmap.ParseException;
import rsmap.complex.Value;
import rsmap.request.ResourceRequest;
import rsmap.request.Same;
import rsmap.request.Scope;

/**
 * Grid Engine's RSMAP manual, "How far the agreement reaches": "The group is chosen once for the whole job,
 * over the hosts it could run on, and every host is then held to it." {@code byMap} maps a resource map's
 * name to the key of that group as text: the identifier under {@code same=id}, the characteristic's value
 * under {@code same=<characteristic>} (compared by meaning there: {@code 80G} is {@code 81920M}). Only a
 * request with {@code same=} and {@code scope=job} is pinned; any other request of the job decides freely.
 */
public record GroupKeys(Map<String, String> byMap) {
    /** Nothing pinned: every group is chosen where the job is placed. */
    public static final GroupKeys NONE = new GroupKeys(Map.of());

    public GroupKeys {
        byMap.forEach((map, key) -> {
            if (map.isEmpty() || key.isEmpty()) {
                throw new IllegalArgumentException("a group key names a map and a key: '" + map + "' '" + key + "'");
            }
        });
        byMap = Collections.unmodifiableMap(new TreeMap<>(byMap));
    }

    public boolean isEmpty() {
        return byMap.isEmpty();
    }

    /** The key {@code r} is held to: present only for a request with same= and scope=job whose map is pinned. */
    Optional<String> pinOf(ResourceRequest r) {
        return spansJob(r) ? Optional.ofNullable(byMap.get(r.name())) : Optional.empty();
    }

    /** Whether {@code r} asks for one group over the whole job (same= with scope=job). */
    public static boolean spansJob(ResourceRequest r) {
        return r.same().isPresent() && r.effectiveScope() == Scope.JOB;
    }

    /** The text of a group key as {@link Groups} holds it: an identifier, or a characteristic's value. */
    static String text(Object key) {
        return key instanceof Value v ? v.text() : key.toString();
    }

    /** Whether group key {@code key} is the one {@code text} names (a value by meaning, an identifier exactly). */
    static boolean names(Object key, String text) {
        if (key instanceof Value v) {
            try {
                return Value.parse(v.type(), text).equals(v);
            } catch (ParseException e) {
                return false; // a text that is no value of the characteristic's type names no group of it
            }
        }
        return key.equals(text);
    }

    /**
     * The keys a running job's scope=job requests hold ({@code picks}: its instances by pool), map by map;
     * a request whose instances carry no key of it (none granted) has none.
     */
    static GroupKeys chosen(JobSpec spec, Map<Pool, int[]> picks) {
        Map<String, String> out = new LinkedHashMap<>();
        for (ResourceRequest r : spec.request().resourceRequests()) {
            if (!spansJob(r) || out.containsKey(r.name())) {
                continue;
            }
            Same same = r.same().get();
            for (Map.Entry<Pool, int[]> e : picks.entrySet()) {
                if (!e.getKey().name().equals(r.name()) || out.containsKey(r.name())) {
                    continue;
                }
                Groups g = e.getKey().groups(same);
                for (int i : e.getValue()) {
                    if (g.groupOf[i] >= 0) {
                        out.put(r.name(), text(g.keys[g.groupOf[i]]));
                        break;
                    }
                }
            }
        }
        return new GroupKeys(out);
    }

    /** {@code gpu=0,nic=1}: map=key in map order; empty for {@link #NONE}. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        byMap.forEach((m, k) -> b.append(b.length() == 0 ? "" : ",").append(m).append('=').append(k));
        return b.toString();
    }
}
