// One instance of a resource map: an identifier (shared N ways when repeated) and its characteristics.
package rsmap.map;

import java.util.Objects;

/** An instance; the identifier is what the job sees in {@code SGE_HGR_<name>}. */
public record Instance(String id, Characteristics characteristics) {
    public Instance {
        Objects.requireNonNull(id);
        Objects.requireNonNull(characteristics);
        if (id.isEmpty()) {
            throw new IllegalArgumentException("empty identifier");
        }
    }

    public static Instance bare(String id) {
        return new Instance(id, Characteristics.NONE);
    }

    @Override
    public String toString() {
        return id + characteristics;
    }
}
