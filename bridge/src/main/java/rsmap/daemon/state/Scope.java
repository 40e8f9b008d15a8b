// What this daemon's core covers, chosen once at construction from its role: a host alone, a host whose
// global maps are its authority's, or the authority itself (the cluster's global maps, jobs of hosts).
package rsmap.daemon.state;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import rsmap.alloc.Cluster;
import rsmap.daemon.config.Config;
import rsmap.map.ComplexValues;
import rsmap.request.Request;
import rsmap.request.RequestList;
import rsmap.request.ResourceRequest;

/** docs/cluster.md: which maps a daemon's core holds, and which part of a request it decides. */
public enum Scope {
    /** No authority: the host's maps and global_complex_values are both this host's to grant. */
    HOST {
        @Override
        RequestList part(RequestList request, Set<String> hostMaps, boolean global) {
            return global ? new RequestList(List.of()) : request;
        }
    },
    /**
     * A host with an authority: the maps it does not have are the cluster's global maps, decided by the
     * authority; a map both this host and the global host serve is this host's.
     */
    LINKED_HOST {
        @Override
        RequestList part(RequestList request, Set<String> hostMaps, boolean global) {
            List<Request> part = new ArrayList<>();
            for (Request r : request.requests()) {
                boolean isGlobal = r instanceof ResourceRequest && !hostMaps.contains(r.name());
                if (isGlobal == global) {
                    part.add(r);
                }
            }
            return new RequestList(part);
        }
    },
    /** The authority: only the cluster's global maps; the hosts whose jobs hold them join as they ask. */
    AUTHORITY {
        @Override
        void configure(Cluster c, String host, ComplexValues hostValues, ComplexValues global) {
            c.configure(Cluster.GLOBAL, global, 0);
        }

        @Override
        RequestList part(RequestList request, Set<String> hostMaps, boolean global) {
            return HOST.part(request, hostMaps, global);
        }
    };

    /** The daemon's role and rsmapd.conf's {@code authority}, as the composition root reads them. */
    public static Scope of(Config config) {
        return config.isAuthority() ? AUTHORITY : config.authority() != null ? LINKED_HOST : HOST;
    }

    /** {@code c} configured with this daemon's maps. */
    void configure(Cluster c, String host, ComplexValues hostValues, ComplexValues global) {
        c.configure(host, hostValues, 0);
        if (!global.entries().isEmpty()) {
            c.configure(Cluster.GLOBAL, global, 0);
        }
    }

    /** The part of {@code request} this daemon decides ({@code global} false) or its authority does (true). */
    abstract RequestList part(RequestList request, Set<String> hostMaps, boolean global);
}
