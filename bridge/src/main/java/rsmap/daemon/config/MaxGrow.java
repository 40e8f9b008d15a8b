// realloc_max_grow (rsmapd.conf(5)): how far a running job may grow each map beyond what it held at start.
package rsmap.daemon.config;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The setting's value: {@code N} or {@code start} for every map, or {@code map=N,...} with an optional
 * {@code *=N}. {@link #START} (-1) stands for "as many as the job held of the map at start".
 */
public record MaxGrow(Map<String, Integer> perMap, int otherwise) {
    static final int START = -1;
    static final MaxGrow NONE = new MaxGrow(Map.of(), 0);
    /** The default: a job may grow each map by what it held of it at start (at most double). */
    static final MaxGrow DEFAULT = new MaxGrow(Map.of(), START);

    public MaxGrow {
        perMap = Map.copyOf(perMap);
    }

    /** The instances of {@code map} a job that held {@code atStart} of it at start may grow by. */
    public int of(String map, int atStart) {
        int n = perMap.getOrDefault(map, otherwise);
        return n == START ? atStart : n;
    }

    /** How the limit of {@code map} is written in a refusal. */
    public String describe(String map) {
        int n = perMap.getOrDefault(map, otherwise);
        return n == START ? "start" : Integer.toString(n);
    }

    /** Parses {@code 2}, {@code start}, {@code gpu=2,lic=0} or {@code gpu=start,*=1}; the message names what is wrong. */
    static MaxGrow parse(String text) {
        Map<String, Integer> per = new LinkedHashMap<>();
        int otherwise = 0;
        for (String item : text.split(",")) {
            String t = item.strip();
            int eq = t.indexOf('=');
            String name = eq < 0 ? "*" : t.substring(0, eq).strip();
            String n = eq < 0 ? t : t.substring(eq + 1).strip();
            if (!n.matches("[0-9]{1,6}|start") || !name.matches("\\*|[A-Za-z_][A-Za-z0-9_.-]*")) {
                throw new IllegalArgumentException("'" + t + "' is not N, start or MAP=N|start (N from 0 to 999999)");
            }
            int value = n.equals("start") ? START : Integer.parseInt(n);
            if (name.equals("*")) {
                otherwise = value;
            } else {
                per.put(name, value);
            }
        }
        return new MaxGrow(per, otherwise);
    }
}
