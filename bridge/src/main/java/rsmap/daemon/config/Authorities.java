// A host's authorities as rsmapd.conf writes them: HOST1:PORT1,HOST2:PORT2 - the active one and its
// standbys, tried in this order (docs/cluster.md, "Active and standby").
package rsmap.daemon.config;

import java.util.ArrayList;
import java.util.List;

/** One parse, one canonical form: {@code node00:7321,node01:7321}; at most {@value #MAX} endpoints, none twice. */
public record Authorities(List<Endpoint> endpoints) {
    static final int MAX = 16;

    public Authorities {
        endpoints = List.copyOf(endpoints);
        if (endpoints.isEmpty() || endpoints.size() > MAX) {
            throw new IllegalArgumentException("1 to " + MAX + " authorities, HOST:PORT separated by commas");
        }
        if (endpoints.stream().distinct().count() != endpoints.size()) {
            throw new IllegalArgumentException("an authority is named twice");
        }
    }

    /** HOST:PORT[,HOST:PORT...]; why it is not, in the exception. */
    static Authorities parse(String text) {
        List<Endpoint> out = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            if (part.isBlank()) {
                throw new IllegalArgumentException("'" + ConfigText.printable(text) + "' has an empty entry: HOST:PORT"
                        + " separated by commas");
            }
            out.add(Endpoint.parse(part.strip()));
        }
        return new Authorities(out);
    }

    /** The first, as the only one was before standbys. */
    Endpoint first() {
        return endpoints.get(0);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        endpoints.forEach(e -> b.append(b.length() == 0 ? "" : ",").append(e));
        return b.toString();
    }
}
