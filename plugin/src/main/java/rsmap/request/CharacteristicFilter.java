// A characteristic parameter of a request, [memory=40G], and how it matches an instance.
package rsmap.request;

import java.util.Objects;
import java.util.Optional;
import rsmap.complex.Complex;
import rsmap.complex.Relop;
import rsmap.complex.Value;
import rsmap.complex.ValueType;
import rsmap.map.Characteristics;

/**
 * Grid Engine's RSMAP manual, "Matching against the characteristics of an instance": the complex's relop with the
 * requested value on the left and the configured one on the right; RESTRING as an expression,
 * CSTRING without regard to case, STRING exactly, HOST by host name rules, numbers by value. An
 * instance without the characteristic never matches.
 *
 * @param pattern the requested value as an expression, for RESTRING only
 */
public record CharacteristicFilter(Complex complex, Value requested, Optional<Expression> pattern) {
    public CharacteristicFilter {
        Objects.requireNonNull(complex);
        Objects.requireNonNull(requested);
        Objects.requireNonNull(pattern);
        if ((complex.type() == ValueType.RESTRING) != pattern.isPresent()) {
            throw new IllegalArgumentException("a pattern goes with a RESTRING characteristic, and only there");
        }
    }

    public String name() {
        return complex.name();
    }

    /** Whether an instance with these characteristics satisfies the parameter. */
    public boolean matches(Characteristics characteristics) {
        Optional<Value> configured = characteristics.get(complex.name());
        if (configured.isEmpty()) {
            return false;
        }
        if (pattern.isPresent()) {
            boolean hit = pattern.get().matches(configured.get().text());
            return complex.relop() == Relop.NE ? !hit : hit;
        }
        return complex.relop().holds(requested.compareTo(configured.get()));
    }

    @Override
    public String toString() {
        return complex.name() + "=" + requested.text();
    }
}
