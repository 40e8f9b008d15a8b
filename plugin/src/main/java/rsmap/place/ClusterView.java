// What placement reads: the cluster's state and the hosts' attributes, with the admin limit.
package rsmap.place;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.alloc.Cluster;
import rsmap.node.Filter;
import rsmap.node.Node;
import rsmap.node.NodeAttributes;

/**
 * {@code nodes} by host name (a host without an entry has no attributes); {@code admin} the filter every
 * job must pass. The global host is never a candidate.
 */
public record ClusterView(Cluster cluster, Map<String, Node> nodes, Optional<Filter> admin) {
    public ClusterView {
        java.util.Objects.requireNonNull(cluster);
        java.util.Objects.requireNonNull(nodes);
        java.util.Objects.requireNonNull(admin);
    }

    /** The hosts a job may be placed on, in configured order. */
    List<String> hosts() {
        List<String> out = new ArrayList<>();
        for (String h : cluster.hosts().keySet()) {
            if (!h.equals(Cluster.GLOBAL)) {
                out.add(h);
            }
        }
        return out;
    }

    Node node(String host) {
        Node n = nodes.get(host);
        return n == null ? Node.of(host, NodeAttributes.NONE) : n;
    }
}
