// A resource map configured on a host: the complex and its instances in configured order.
package rsmap.map;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import rsmap.complex.Complex;

/**
 * {@code gpu=4(0-3)}: the instances of one RSMAP complex on one host. The amount is the number of
 * instances; repeated identifiers are shares of one physical resource (Grid Engine's RSMAP manual, "Repeated
 * identifiers").
 */
public record ResourceMap(Complex complex, List<Instance> instances) implements ComplexValues.Entry {
    public ResourceMap {
        Objects.requireNonNull(complex);
        instances = List.copyOf(instances);
        if (!complex.isResourceMap()) {
            throw new IllegalArgumentException(complex.name() + " is not a resource map");
        }
    }

    public String name() {
        return complex.name();
    }

    public int amount() {
        return instances.size();
    }

    /** The first instance with identifier {@code id} (shares of one identifier are alike). */
    public java.util.Optional<Instance> instance(String id) {
        return instances.stream().filter(i -> i.id().equals(id)).findFirst();
    }

    /**
     * The canonical long form: instances in configured order; an ascending run of three or more
     * consecutive integer identifiers without characteristics, each occurring once in the map, is
     * written as a range; characteristics sorted by name, once per occurrence.
     */
    @Override
    public String toString() {
        Map<String, Integer> occurrences = new HashMap<>();
        for (Instance i : instances) {
            occurrences.merge(i.id(), 1, Integer::sum);
        }
        StringBuilder b = new StringBuilder(name()).append('=').append(amount()).append('(');
        int n = instances.size();
        for (int i = 0; i < n; ) {
            if (i > 0) {
                b.append(' ');
            }
            long first = rangeable(instances.get(i), occurrences);
            int j = i + 1;
            if (first >= 0) {
                while (j < n && rangeable(instances.get(j), occurrences) == first + (j - i)) {
                    j++;
                }
            }
            if (j - i >= 3) {
                b.append(first).append('-').append(first + (j - i - 1));
                i = j;
            } else {
                b.append(instances.get(i));
                i++;
            }
        }
        return b.append(')').toString();
    }

    /** The integer value of an identifier that may stand in a range, or -1. */
    private static long rangeable(Instance i, Map<String, Integer> occurrences) {
        String id = i.id();
        if (!i.characteristics().isEmpty() || occurrences.get(id) != 1 || id.length() > 18
                || !(id.equals("0") || id.matches("[1-9][0-9]*"))) {
            return -1;
        }
        return Long.parseLong(id);
    }
}
