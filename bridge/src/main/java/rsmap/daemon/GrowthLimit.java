// How far a running job may grow by REALLOC beyond what it held at start, per map (realloc_max_grow):
// the scheduler never sees a grow, so by default a job grows back only what was taken away from it.
package rsmap.daemon;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import rsmap.alloc.Grant;
import rsmap.realloc.Realloc;
import rsmap.request.ResourceRequest;

/**
 * A REALLOC that adds is refused (DENY, naming the limit) when the job would then hold more instances of
 * a map - held, to give back and asked for together - than its ceiling: what it held of that map at start
 * plus {@code realloc_max_grow} for the map (docs/realloc.md, "How far a job may grow"). What it held at
 * start is taken at its first realloc here (before that realloc changes anything), so it is the start
 * grant, or after a restart of rsmapd what it held then. Called under the daemon's lock.
 */
final class GrowthLimit {
    /** The setting's value: {@code N} for every map, or {@code map=N,...} with an optional {@code *=N}. */
    record Setting(Map<String, Integer> perMap, int otherwise) {
        static final Setting NONE = new Setting(Map.of(), 0);

        Setting {
            perMap = Map.copyOf(perMap);
        }

        int of(String map) {
            return perMap.getOrDefault(map, otherwise);
        }

        /** Parses {@code 2}, {@code gpu=2,lic=0} or {@code gpu=2,*=1}; the message names what is wrong. */
        static Setting parse(String text) {
            Map<String, Integer> per = new LinkedHashMap<>();
            int otherwise = 0;
            for (String item : text.split(",")) {
                String t = item.strip();
                int eq = t.indexOf('=');
                String name = eq < 0 ? "*" : t.substring(0, eq).strip();
                String n = eq < 0 ? t : t.substring(eq + 1).strip();
                if (!n.matches("[0-9]{1,6}") || !name.matches("\\*|[A-Za-z_][A-Za-z0-9_.-]*")) {
                    throw new IllegalArgumentException("'" + t + "' is not N or MAP=N (N from 0 to 999999)");
                }
                if (name.equals("*")) {
                    otherwise = Integer.parseInt(n);
                } else {
                    per.put(name, Integer.parseInt(n));
                }
            }
            return new Setting(per, otherwise);
        }
    }

    /** Job -> map -> instances held at its first realloc here. */
    private final Map<String, Map<String, Integer>> atStart = new HashMap<>();

    /** Why {@code r} would take {@code job} over its ceiling, if it would. */
    Optional<String> refusal(Job job, Realloc r, Setting limit, String host) {
        Map<String, Integer> holds = counts(job.grant().plus(job.releasing()), host);
        Map<String, Integer> start = atStart.computeIfAbsent(job.id(), id -> holds);
        if (r.add().isEmpty()) {
            return Optional.empty();
        }
        Map<String, Integer> asked = new LinkedHashMap<>();
        for (ResourceRequest q : r.add().get().resourceRequests()) {
            asked.merge(q.complex().name(), q.amount(), Integer::sum);
        }
        for (Map.Entry<String, Integer> e : asked.entrySet()) {
            String map = e.getKey();
            int ceiling = start.getOrDefault(map, 0) + limit.of(map);
            int after = holds.getOrDefault(map, 0) + e.getValue();
            if (after > ceiling) {
                return Optional.of("job " + job.id() + " would hold " + after + " " + map + " instances, over its limit of "
                        + ceiling + " (" + start.getOrDefault(map, 0) + " at start + realloc_max_grow " + limit.of(map)
                        + " for " + map + "): the scheduler does not see a grow");
            }
        }
        return Optional.empty();
    }

    /** Drops what it remembers of jobs no longer held here. */
    void retain(java.util.Set<String> jobs) {
        atStart.keySet().retainAll(jobs);
    }

    private static Map<String, Integer> counts(Grant g, String host) {
        Map<String, Integer> out = new HashMap<>();
        g.byHost().getOrDefault(host, Map.of()).forEach((map, ids) -> out.merge(map, ids.size(), Integer::sum));
        return out;
    }
}
