// Instances of one host that cannot be held at once: a whole card and its MIG slices, two slices whose
// placements overlap (docs/gpus.md, "Partitions on demand"); and instances out of use while something
// outside rsmapd holds what they need (an admin's static slice; a tainted partner is the core's taint).
package rsmap.alloc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import rsmap.map.ComplexValues;

/**
 * An instance is named by its map and identifier (every share of an identifier alike). The core asks this
 * when it decides what is available: an instance is not, while a partner of it is held or tainted (partners
 * share hardware: a sick or drained card's slices are sick too, and a drained slice takes its card and the
 * slices overlapping it out of use), or while it is blocked; it picks no two partners for one request.
 * Invariant: the relation is symmetric.
 */
public final class Exclusions {
    /** No instance excludes another. */
    public static final Exclusions NONE = new Exclusions(Map.of(), Map.of());

    /** How a host's exclusions follow from its complex_values (asked at each configure). */
    public interface Rule {
        Exclusions of(String host, ComplexValues values);

        Rule NONE = (host, values) -> Exclusions.NONE;
    }

    /** An instance: its map and identifier. */
    public record Key(String map, String id) {
        public Key {
            Objects.requireNonNull(map, "map");
            Objects.requireNonNull(id, "id");
        }

        @Override
        public String toString() {
            return map + " " + id;
        }
    }

    private final Map<Key, List<Key>> partners;
    /** Instances out of use, with why. */
    private final Map<Key, String> blocked;

    private Exclusions(Map<Key, List<Key>> partners, Map<Key, String> blocked) {
        this.partners = partners;
        this.blocked = blocked;
    }

    /** Exclusions of the pairs {@code pairs} (each one way; made symmetric here) and the instances {@code blocked}. */
    public static Exclusions of(List<Map.Entry<Key, Key>> pairs, Map<Key, String> blocked) {
        Map<Key, Set<Key>> m = new HashMap<>();
        for (Map.Entry<Key, Key> p : pairs) {
            if (!p.getKey().equals(p.getValue())) {
                m.computeIfAbsent(p.getKey(), k -> new java.util.LinkedHashSet<>()).add(p.getValue());
                m.computeIfAbsent(p.getValue(), k -> new java.util.LinkedHashSet<>()).add(p.getKey());
            }
        }
        Map<Key, List<Key>> out = new HashMap<>();
        m.forEach((k, v) -> out.put(k, List.copyOf(v)));
        return new Exclusions(Map.copyOf(out), Map.copyOf(blocked));
    }

    public boolean isEmpty() {
        return partners.isEmpty() && blocked.isEmpty();
    }

    /** The instances that cannot be held while {@code k} is. */
    public List<Key> partners(Key k) {
        return partners.getOrDefault(k, List.of());
    }

    /** Why {@code k} is out of use, or null. */
    public String blocked(Key k) {
        return blocked.get(k);
    }

    /**
     * Why an instance cannot be taken now, as data (what {@code rsmap status} shows of it): a partner
     * {@code by} held by {@code job}, or tainted ({@code taint}, the core's why of it), or blocked outright
     * ({@code by} null: {@code reason} says by what). {@code reason} is the text an explanation shows.
     */
    public record Block(String reason, Key by, String job, String taint) {
        public Block {
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * Why instance {@code i} of {@code pool} cannot be taken now (a held or tainted partner, or blocked), or
     * null; {@code siblings} are the pools of its host by map name.
     */
    static String why(Pool pool, int i, Map<String, Pool> siblings) {
        Block b = block(pool, i, siblings);
        return b == null ? null : b.reason();
    }

    /** {@link #why} as data, or null. */
    static Block block(Pool pool, int i, Map<String, Pool> siblings) {
        Exclusions x = pool.exclusions;
        if (x.isEmpty()) {
            return null;
        }
        Key k = new Key(pool.name(), pool.instances[i].id());
        String b = x.blocked(k);
        if (b != null) {
            return new Block(b, null, null, null);
        }
        for (Key p : x.partners(k)) {
            Pool q = siblings.get(p.map());
            if (q == null) {
                continue;
            }
            for (int j : q.indexesOf(p.id())) {
                if (q.heldBy[j] != null) {
                    return new Block("excluded by " + p + " held by job " + q.heldBy[j], p, q.heldBy[j], null);
                }
                if (q.taint[j] != null) {
                    return new Block("excluded by " + p + ", tainted: " + q.taint[j], p, null, q.taint[j]);
                }
            }
        }
        return null;
    }

    /** Unmarks in {@code a} (of {@code pool}) the partners of instances {@code picked} on the same host. */
    static void unmarkPartnersOf(Pool pool, boolean[] a, Map<Pool, int[]> picked) {
        if (pool.exclusions.isEmpty() || picked.isEmpty()) {
            return;
        }
        for (int i = 0; i < a.length; i++) {
            if (!a[i]) {
                continue;
            }
            for (Key k : pool.exclusions.partners(new Key(pool.name(), pool.instances[i].id()))) {
                for (Map.Entry<Pool, int[]> e : picked.entrySet()) {
                    Pool q = e.getKey();
                    if (q.host.equals(pool.host) && q.name().equals(k.map())) {
                        for (int j : e.getValue()) {
                            a[i] &= !q.instances[j].id().equals(k.id());
                        }
                    }
                }
            }
        }
    }

    /** Whether {@code a} and {@code b} of {@code pool} exclude each other. */
    static boolean apart(Pool pool, int a, int b) {
        return !pool.exclusions.isEmpty() && pool.exclusions.partners(new Key(pool.name(), pool.instances[a].id()))
                .contains(new Key(pool.name(), pool.instances[b].id()));
    }

    /** The identifiers involved, for a log line. */
    @Override
    public String toString() {
        List<String> out = new ArrayList<>();
        partners.forEach((k, v) -> out.add(k + " x " + v));
        blocked.forEach((k, v) -> out.add(k + " blocked: " + v));
        return String.join("; ", out);
    }
}
