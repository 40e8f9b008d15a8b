// RFC 51's jobspec forms (spec_add, spec_sub): a Jobspec version 1 read as a request of resource maps.
package rsmap.realloc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import rsmap.flux.Jobspec;

/**
 * The request language form of a jobspec's resource-map leaves: {@code {"type":"gpu","count":2}} in
 * each of 3 slots is {@code gpu=6} (count per slot times the slots, as RFC 14 counts). Cores are
 * ignored: RFC 25 requires one in every slot, and rsmapd grants no cores (the job's cores are its
 * scheduler's). A leaf of count 0 asks for nothing.
 */
public final class SpecRequest {
    private SpecRequest() {
    }

    /** The request, or empty when the jobspec names no resource map with a count above 0. */
    public static String of(Jobspec spec) {
        List<String> parts = new ArrayList<>();
        for (Map.Entry<String, Integer> e : spec.maps().entrySet()) {
            long total = (long) e.getValue() * spec.slots();
            if (total > 0) {
                parts.add(e.getKey() + "=" + total);
            }
        }
        return String.join(",", parts);
    }
}
