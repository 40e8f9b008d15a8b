// The settings of rsmapd.conf that describe the host to filters and placement (docs/alternatives.md):
// attribute_types, attributes and alternatives_policy, each error pointing at its column.
package rsmap.daemon.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import rsmap.Continuation;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.node.AttributeType;
import rsmap.node.AttributeTypes;
import rsmap.node.NodeAttributes;

/** Read by {@link Config#parse}: the values by key, and where each value begins in the text. */
public final class HostSettings {
    private HostSettings() {
    }

    /**
     * {@code alternatives_policy = user | fewest | ranking LABEL,LABEL...}: how PLACE orders a job's
     * options before the user's order (docs/alternatives.md, "Admin policy").
     */
    static rsmap.place.Policy alternativesPolicy(Continuation lines, Map<String, String> values,
                                                         Map<String, Integer> where) throws ParseException {
        String text = values.getOrDefault("alternatives_policy", "user").strip();
        String kind = text.split("\\s+", 2)[0];
        List<String> ranking = text.contains(" ") ? List.of(text.substring(kind.length()).strip().split("\\s*,\\s*"))
                : List.of();
        try {
            if (!kind.equals("ranking") && !ranking.isEmpty()) {
                throw new IllegalArgumentException(kind + " takes no labels");
            }
            return rsmap.place.Policy.of(kind, ranking);
        } catch (IllegalArgumentException e) {
            throw lines.error("alternatives_policy is user, fewest, or ranking LABEL,LABEL...; '" + ConfigText.printable(text)
                    + "': " + e.getMessage(), where.get("alternatives_policy"));
        }
    }

    /**
     * attribute_types = name:type,...: the discovered attributes' types (Discovery.TYPES), with these
     * declared over them; the same declarations as simulate's attribute-types op.
     */
    static AttributeTypes attributeTypes(Continuation lines, Map<String, String> values,
                                                 Map<String, Integer> valueAt) throws ParseException {
        Map<String, AttributeType> out = new LinkedHashMap<>(Discovery.types().types());
        Map<String, AttributeType> declared = new LinkedHashMap<>();
        for (Item item : items(lines, values, valueAt, "attribute_types", ':', "name:type")) {
            String problem = NodeAttributes.nameProblem(item.name);
            if (problem != null) {
                throw lines.error("attribute_types: " + problem, item.at);
            }
            AttributeType t = AttributeType.byName(item.value).orElseThrow(() -> lines.error("attribute_types: unknown type '"
                    + ConfigText.printable(item.value) + "' for '" + item.name + "' (string, number, version or boolean)",
                    item.valueAt));
            if (declared.put(item.name, t) != null) {
                throw lines.error("attribute_types: '" + item.name + "' is declared twice", item.at);
            }
        }
        out.putAll(declared);
        return new AttributeTypes(out);
    }

    /** attributes = name=value,...: each value read with its declared type (or inferred), name to text. */
    static Map<String, String> attributes(Continuation lines, Map<String, String> values,
                                                  Map<String, Integer> valueAt, AttributeTypes types) throws ParseException {
        Map<String, String> out = new LinkedHashMap<>();
        for (Item item : items(lines, values, valueAt, "attributes", '=', "name=value")) {
            String problem = NodeAttributes.nameProblem(item.name);
            if (problem != null) {
                throw lines.error("attributes: " + problem, item.at);
            }
            if (out.put(item.name, item.value) != null) {
                throw lines.error("attributes: '" + item.name + "' is set twice", item.at);
            }
            try {
                NodeAttributes.parse(Map.of(item.name, item.value), types, Limits.DEFAULT);
            } catch (ParseException e) {
                throw lines.error("attributes: " + e.problem(), item.valueAt + e.offset());
            }
        }
        return java.util.Collections.unmodifiableMap(out);
    }

    /** One {@code name SEP value} of a comma-separated setting, with where its name and value begin. */
    private record Item(String name, String value, int at, int valueAt) {
    }

    private static List<Item> items(Continuation lines, Map<String, String> values, Map<String, Integer> valueAt,
                                    String key, char sep, String form) throws ParseException {
        String text = values.get(key);
        List<Item> out = new java.util.ArrayList<>();
        if (text == null) {
            return out;
        }
        int base = valueAt.get(key);
        int from = 0;
        while (from <= text.length()) {
            int comma = text.indexOf(',', from);
            int end = comma < 0 ? text.length() : comma;
            String part = text.substring(from, end);
            int lead = part.length() - part.stripLeading().length();
            int at = base + from + lead;
            int s = part.indexOf(sep);
            if (part.isBlank() || s < 0) {
                throw lines.error(key + ": expected " + form + (part.isBlank() ? ", found nothing" : ", found '"
                        + ConfigText.printable(part.strip()) + "'"), at);
            }
            String name = part.substring(0, s).strip();
            String rest = part.substring(s + 1);
            String value = rest.strip();
            int vAt = base + from + s + 1 + rest.length() - rest.stripLeading().length();
            if (value.isEmpty()) {
                throw lines.error(key + ": '" + ConfigText.printable(name) + "' has no value", vAt);
            }
            out.add(new Item(name, value, at, vAt));
            if (comma < 0) {
                break;
            }
            from = comma + 1;
        }
        return out;
    }

    /**
     * An execd spool without {@code active_jobs} is a slip (the spool folder without the host part, hole
     * 4): reconciling against it would release every running job. Refused at start and at RELOAD.
     */
    public static void checkSpool(Config config, Path file) throws IOException {
        Path spool = config.execdSpool();
        if (spool != null && !Files.isDirectory(spool.resolve("active_jobs"))) {
            throw new IOException(ConfigText.where(config, file, "execd_spool") + ": " + spool.resolve("active_jobs")
                    + " is not a directory; execd_spool names execd's spool directory of this host "
                    + "(execd_spool_dir/<host>), which holds active_jobs/");
        }
    }
}
