// An advance reservation as requested: instances of maps on hosts over a time window.
package rsmap.alloc;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import rsmap.request.RequestList;

/** An advance reservation (Grid Engine's RSMAP manual, "Inside an advance reservation") over {@code [start, end)}. */
public record ReservationSpec(String id, RequestList request, Map<String, Integer> hosts, long start, long end) {
    public ReservationSpec {
        Objects.requireNonNull(id);
        Objects.requireNonNull(request);
        hosts = Collections.unmodifiableMap(new LinkedHashMap<>(hosts));
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("a reservation covers at least one host");
        }
    }
}
