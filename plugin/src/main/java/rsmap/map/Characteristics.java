// The typed metadata of one instance: characteristic name -> value, kept sorted by name.
package rsmap.map;

import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import rsmap.complex.Value;

/**
 * The characteristics block of an instance, {@code [devices=/dev/nvidia0:rw,memory=80G]}. Names are
 * full complex names; a characteristic is metadata and is never booked (Grid Engine's RSMAP manual, "CHARACTERISTICS").
 * Immutable, held as two sorted arrays because a host may carry thousands of them.
 */
public final class Characteristics {
    public static final Characteristics NONE = new Characteristics(new String[0], new Value[0]);

    /** Sorted names; the arrays are never modified after construction. */
    private final String[] names;
    private final Value[] values;

    private Characteristics(String[] names, Value[] values) {
        this.names = names;
        this.values = values;
    }

    public static Characteristics of(Map<String, Value> values) {
        if (values.isEmpty()) {
            return NONE;
        }
        TreeMap<String, Value> sorted = new TreeMap<>(values);
        return new Characteristics(sorted.keySet().toArray(new String[0]), sorted.values().toArray(new Value[0]));
    }

    /** These characteristics sharing {@code names}, an equal array of names (memory, not meaning). */
    Characteristics withNames(String[] sharedNames) {
        if (!Arrays.equals(names, sharedNames)) {
            throw new IllegalArgumentException("names differ");
        }
        return new Characteristics(sharedNames, values);
    }

    String[] names() {
        return names;
    }

    public boolean isEmpty() {
        return names.length == 0;
    }

    /** The value of the named characteristic, empty where the instance does not carry it. */
    public Optional<Value> get(String name) {
        int i = Arrays.binarySearch(names, name);
        return i >= 0 ? Optional.of(values[i]) : Optional.empty();
    }

    /** All characteristics, sorted by name. */
    public SortedMap<String, Value> asMap() {
        TreeMap<String, Value> m = new TreeMap<>();
        for (int i = 0; i < names.length; i++) {
            m.put(names[i], values[i]);
        }
        return Collections.unmodifiableSortedMap(m);
    }

    /** Whether both carry the same names with the same values as written (Grid Engine's RSMAP manual: "the same set"). */
    public boolean sameText(Characteristics other) {
        if (!Arrays.equals(names, other.names)) {
            return false;
        }
        for (int i = 0; i < values.length; i++) {
            if (!values[i].text().equals(other.values[i].text())) {
                return false;
            }
        }
        return true;
    }

    /** Equal when the names match and every value is equal by its type. */
    @Override
    public boolean equals(Object o) {
        return o instanceof Characteristics && Arrays.equals(names, ((Characteristics) o).names)
                && Arrays.equals(values, ((Characteristics) o).values);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(names) + Arrays.hashCode(values);
    }

    /** The canonical block {@code [a=1,b=2]} (sorted by name), or nothing for no characteristics. */
    @Override
    public String toString() {
        if (names.length == 0) {
            return "";
        }
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < names.length; i++) {
            b.append(i > 0 ? "," : "").append(names[i]).append('=').append(values[i].text());
        }
        return b.append(']').toString();
    }
}
