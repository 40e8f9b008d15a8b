// A place for a slice: the identifier of a mig_map instance, "CARD:PROFILE@START" (NVML's index of the
// card, the GPU instance profile, the first memory slice of one of its possible placements).
package rsmap.daemon.devices;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** {@code 0:3g.40gb@4}: the canonical form {@link #toString()} prints and {@link #parse} reads. */
public record MigSlot(int card, String profile, int start) {
    private static final Pattern FORM = Pattern.compile("(0|[1-9][0-9]{0,3}):([A-Za-z0-9.+_-]{1,32})@(0|[1-9][0-9]{0,2})");

    public MigSlot {
        java.util.Objects.requireNonNull(profile, "profile");
    }

    /** The slot an identifier names, or empty when it is not one. */
    public static Optional<MigSlot> parse(String id) {
        Matcher m = FORM.matcher(id);
        return m.matches() ? Optional.of(new MigSlot(Integer.parseInt(m.group(1)), m.group(2),
                Integer.parseInt(m.group(3)))) : Optional.empty();
    }

    @Override
    public String toString() {
        return card + ":" + profile + "@" + start;
    }
}
