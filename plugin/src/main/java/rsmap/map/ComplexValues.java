// The complex_values of a host: resource maps and ordinary settings, in configured order.
package rsmap.map;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;

/**
 * A host's {@code complex_values} (Grid Engine's RSMAP manual, "CONFIGURING A RESOURCE MAP ON A HOST"), e.g.
 * {@code gpu=2(gpu0[devices=/dev/nvidia0:rw,memory=80G] gpu1),mem_free=64G}. {@link #toString()}
 * is the canonical form, which {@link #parse} reads back to an equal value; an empty list prints
 * as {@code NONE}.
 */
public record ComplexValues(List<Entry> entries) {
    /** One entry of the list: a resource map or an ordinary setting. */
    public sealed interface Entry permits ResourceMap, Setting {
        String name();
    }

    public ComplexValues {
        entries = List.copyOf(entries);
    }

    public static ComplexValues parse(String text, ComplexTable table) throws ParseException {
        return parse(text, table, Limits.DEFAULT);
    }

    /** Reads a complex_values string, checking every rule of the seed against {@code table}. */
    public static ComplexValues parse(String text, ComplexTable table, Limits limits) throws ParseException {
        return new ComplexValuesParser(text, table, limits).parse();
    }

    /** The resource maps, in configured order. */
    public List<ResourceMap> resourceMaps() {
        List<ResourceMap> maps = new ArrayList<>();
        for (Entry e : entries) {
            if (e instanceof ResourceMap) {
                maps.add((ResourceMap) e);
            }
        }
        return maps;
    }

    /** The resource map of that name, if configured. */
    public Optional<ResourceMap> resourceMap(String name) {
        for (ResourceMap m : resourceMaps()) {
            if (m.name().equals(name)) {
                return Optional.of(m);
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        if (entries.isEmpty()) {
            return "NONE";
        }
        StringBuilder b = new StringBuilder();
        for (Entry e : entries) {
            b.append(b.length() > 0 ? "," : "").append(e);
        }
        return b.toString();
    }
}
