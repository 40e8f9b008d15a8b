// A request for a resource map: the amount and the parameters that choose and group its instances.
package rsmap.request;

import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import rsmap.complex.Complex;
import java.util.stream.Collectors;
import rsmap.map.Instance;

/**
 * {@code gpu=4[id=gpu*,same=id,scope=job,memory=40G]}. Parameters combine: an instance must satisfy
 * all of them (Grid Engine's RSMAP manual, "Parameters in a request").
 *
 * @param scope empty where the request leaves it out (then {@link #effectiveScope()} is HOST)
 */
public record ResourceRequest(Complex complex, int amount, Optional<Expression> id, Optional<Same> same,
                              Optional<Scope> scope, List<CharacteristicFilter> filters) implements Request {
    public ResourceRequest {
        Objects.requireNonNull(complex);
        Objects.requireNonNull(id);
        Objects.requireNonNull(same);
        Objects.requireNonNull(scope);
        // Parameters combine regardless of order: keep them sorted by name, the canonical order.
        filters = filters.stream().sorted(Comparator.comparing(CharacteristicFilter::name))
                .collect(Collectors.toUnmodifiableList());
        if (!complex.isResourceMap()) {
            throw new IllegalArgumentException(complex.name() + " is not a resource map");
        }
        if (amount < 1) {
            throw new IllegalArgumentException("amount must be at least 1");
        }
        if (scope.isPresent() && same.isEmpty()) {
            throw new IllegalArgumentException("scope= needs same=");
        }
    }

    /** A plain {@code name=amount} request without parameters. */
    public static ResourceRequest of(Complex complex, int amount) {
        return new ResourceRequest(complex, amount, Optional.empty(), Optional.empty(), Optional.empty(), List.of());
    }

    /** HOST unless the request says scope=job. */
    public Scope effectiveScope() {
        return scope.orElse(Scope.HOST);
    }

    public boolean hasParameters() {
        return id.isPresent() || same.isPresent() || scope.isPresent() || !filters.isEmpty();
    }

    /** Whether the instance satisfies the id= expression and every characteristic parameter. */
    public boolean admits(Instance instance) {
        if (id.isPresent() && !id.get().matches(instance.id())) {
            return false;
        }
        for (CharacteristicFilter f : filters) {
            if (!f.matches(instance.characteristics())) {
                return false;
            }
        }
        return true;
    }

    /** The canonical form: id, same, scope, then characteristics sorted by name. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(complex.name()).append('=').append(amount);
        if (!hasParameters()) {
            return b.toString();
        }
        StringBuilder p = new StringBuilder();
        id.ifPresent(e -> p.append(",id=").append(e));
        same.ifPresent(s -> p.append(",same=").append(s));
        scope.ifPresent(s -> p.append(",scope=").append(s));
        filters.forEach(f -> p.append(',').append(f));
        return b.append('[').append(p.substring(1)).append(']').toString();
    }
}
