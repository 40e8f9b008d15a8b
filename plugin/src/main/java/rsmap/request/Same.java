// same= of a resource map request: what the granted instances must have in common.
package rsmap.request;

import java.util.Objects;
import java.util.Optional;
import rsmap.map.Instance;

/**
 * Grid Engine's RSMAP manual, "Requiring that the granted instances agree": {@code id} (shares of one identifier) or
 * the name of a characteristic (instances whose value of it is the same).
 */
public record Same(String name) {
    public static final String ID = "id";

    public Same {
        Objects.requireNonNull(name);
    }

    public boolean isId() {
        return name.equals(ID);
    }

    /**
     * The group an instance belongs to under this constraint: its identifier, or its value of the
     * characteristic; empty where the instance does not carry the characteristic and so cannot take
     * part ("there is nothing for it to agree with").
     */
    public Optional<Object> groupOf(Instance instance) {
        if (isId()) {
            return Optional.of(instance.id());
        }
        return instance.characteristics().get(name).map(v -> v);
    }

    @Override
    public String toString() {
        return name;
    }
}
