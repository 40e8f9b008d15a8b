// A non-resource-map entry of complex_values, such as mem_free=64G.
package rsmap.map;

import java.util.Objects;
import rsmap.complex.Complex;
import rsmap.complex.Value;

/** {@code name=value} for an ordinary complex: read with the complex's type, printed as written. */
public record Setting(Complex complex, Value value) implements ComplexValues.Entry {
    public Setting {
        Objects.requireNonNull(complex);
        Objects.requireNonNull(value);
    }

    public String name() {
        return complex.name();
    }

    @Override
    public String toString() {
        return name() + "=" + value.text();
    }
}
