// A request for an ordinary complex, arch=lx-amd64 or mem_free=4G.
package rsmap.request;

import java.util.Objects;
import rsmap.complex.Complex;
import rsmap.complex.Value;

/** {@code name=value} for a complex that is not a resource map; string values may be patterns. */
public record PlainRequest(Complex complex, Value value) implements Request {
    public PlainRequest {
        Objects.requireNonNull(complex);
        Objects.requireNonNull(value);
    }

    @Override
    public String toString() {
        return complex.name() + "=" + value.text();
    }
}
