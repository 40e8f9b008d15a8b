// Column "consumable" of a complex: whether and how often a request for it is booked.
package rsmap.complex;

import java.util.Optional;
import rsmap.Chars;

/**
 * How a consumable is booked (Grid Engine's RSMAP manual, "How often the amount is taken"): YES per slot, JOB once for
 * the whole job on the master host, HOST once per host the job runs on; NO is not a consumable.
 */
public enum Consumable {
    NO, YES, JOB, HOST;

    public boolean isConsumable() {
        return this != NO;
    }

    public static Optional<Consumable> byName(String text) {
        for (Consumable c : values()) {
            if (Chars.keyword(text, c.name())) {
                return Optional.of(c);
            }
        }
        return Optional.empty();
    }
}
