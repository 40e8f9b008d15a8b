// The typed metadata of one instance: characteristic name -> value, kept sorted by name.
package rsmap.map;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import rsmap.complex.Value;

/**
 * The characteristics block of an instance, {@code [devices=/dev/nvidia0:rw,memory=80G]}. Names are
 * full complex names; a characteristic is metadata and is never booked (seed 002, "CHARACTERISTICS").
 */
public record Characteristics(SortedMap<String, Value> values) {
    public static final Characteristics NONE = new Characteristics(new TreeMap<>());

    public Characteristics {
        values = Collections.unmodifiableSortedMap(new TreeMap<>(values));
    }

    public static Characteristics of(Map<String, Value> values) {
        return values.isEmpty() ? NONE : new Characteristics(new TreeMap<>(values));
    }

    public boolean isEmpty() {
        return values.isEmpty();
    }

    /** The value of the named characteristic, empty where the instance does not carry it. */
    public Optional<Value> get(String name) {
        return Optional.ofNullable(values.get(name));
    }

    /** Whether both carry the same names with the same values as written (seed 002: "the same set"). */
    public boolean sameText(Characteristics other) {
        if (!values.keySet().equals(other.values.keySet())) {
            return false;
        }
        for (Map.Entry<String, Value> e : values.entrySet()) {
            if (!e.getValue().text().equals(other.values.get(e.getKey()).text())) {
                return false;
            }
        }
        return true;
    }

    /** The canonical block {@code [a=1,b=2]} (sorted by name), or nothing for no characteristics. */
    @Override
    public String toString() {
        if (values.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder("[");
        values.forEach((k, v) -> b.append(b.length() > 1 ? "," : "").append(k).append('=').append(v.text()));
        return b.append(']').toString();
    }
}
