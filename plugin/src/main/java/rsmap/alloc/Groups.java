// Which instances agree under a same= constraint: a group index per instance, cached per pool.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.request.Same;

/**
 * The groups of a pool under one same= name: {@code groupOf[i]} is the group of instance i, or -1
 * where the instance does not carry the characteristic and so cannot take part (Grid Engine's RSMAP manual, "Requiring
 * that the granted instances agree"). Groups are numbered in configured order of first occurrence.
 */
final class Groups {
    final int[] groupOf;
    final Object[] keys;

    private Groups(int[] groupOf, Object[] keys) {
        this.groupOf = groupOf;
        this.keys = keys;
    }

    static Groups byId(Pool pool) {
        return new Groups(pool.idIndex, pool.ids);
    }

    static Groups of(Pool pool, Same same) {
        if (same.isId()) {
            return byId(pool);
        }
        int[] groupOf = new int[pool.size()];
        Map<Object, Integer> index = new HashMap<>();
        List<Object> keys = new ArrayList<>();
        for (int i = 0; i < pool.size(); i++) {
            Optional<Object> key = same.groupOf(pool.instances[i]);
            if (key.isEmpty()) {
                groupOf[i] = -1;
                continue;
            }
            Integer g = index.get(key.get());
            if (g == null) {
                g = keys.size();
                index.put(key.get(), g);
                keys.add(key.get());
            }
            groupOf[i] = g;
        }
        return new Groups(groupOf, keys.toArray());
    }

    /** The group whose key {@code text} names ({@link GroupKeys#names}), or -1. */
    int named(String text) {
        for (int g = 0; g < keys.length; g++) {
            if (GroupKeys.names(keys[g], text)) {
                return g;
            }
        }
        return -1;
    }

    /** The group whose key equals {@code key}, or -1. */
    int find(Object key) {
        for (int g = 0; g < keys.length; g++) {
            if (keys[g].equals(key)) {
                return g;
            }
        }
        return -1;
    }
}
