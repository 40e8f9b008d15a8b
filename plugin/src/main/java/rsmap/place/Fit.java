// Where one option would run at one time (issue 15): its hosts and slots, or why it cannot run then.
package rsmap.place;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.alloc.JobSpec;
import rsmap.node.AttributeValue;
import rsmap.node.Filters;

/**
 * The placement rules (docs/alternatives.md, "Placement rules"), deterministic:
 * <ol>
 * <li>A fixed option runs on its own hosts, if they can grant it all.
 * <li>Eligible hosts: the candidates (all hosts when none are given), in configured order, that pass
 *     the admin limit and the option's filter.
 * <li>With {@code group}, the eligible hosts are split by that attribute's value (hosts without it are
 *     left out). With {@code group_values} (only those values) the first value, in that order, whose
 *     hosts can take the job wins. Without, every value is tried and the one taking the job on the
 *     fewest hosts wins (the PBS design's "smallest quantity of like nodes"); order of first appearance
 *     only breaks ties.
 * <li>Spread: hosts in order, each taking as many of the remaining slots as its free slots allow and
 *     as it can grant the request for (the largest such count); until all slots are placed.
 * <li>Whole hosts (seed 003 use case 3, "like nodes"): only hosts with a slot capacity, entirely free,
 *     that can grant the request on all their slots, all of one capacity c dividing {@code slots}; the
 *     largest such c with enough hosts wins (fewest hosts), the first slots/c of them in order.
 * <li>The chosen hosts are checked once more together (a map served by the global host is shared).
 * </ol>
 * {@code hosts} is empty exactly when the option cannot run; {@code why} then says why.
 */
record Fit(Map<String, Integer> hosts, String why) {
    Fit {
        hosts = Collections.unmodifiableMap(new LinkedHashMap<>(hosts));
    }

    boolean ok() {
        return !hosts.isEmpty();
    }

    private static Fit no(String why) {
        return new Fit(Map.of(), why);
    }

    /** Where option {@code o} of job {@code id} would run, starting at {@code at} (now or later). */
    static Fit at(Option o, PlacedJob job, ClusterView v, long at) {
        if (o.isFixed()) {
            return fits(o, job, v, o.hosts(), at) ? new Fit(o.hosts(), "")
                    : no("its hosts cannot grant it" + (at > v.cluster().now() ? " at " + at : " now"));
        }
        Filters filters = Filters.combine(v.admin(), o.filter());
        List<String> eligible = new ArrayList<>();
        for (String h : v.hosts()) {
            if ((o.candidates().isEmpty() || o.candidates().contains(h)) && filters.test(v.node(h))) {
                eligible.add(h);
            }
        }
        if (eligible.isEmpty()) {
            return no("no candidate host passes the filter");
        }
        if (o.group().isEmpty()) {
            return fill(o, job, v, eligible, at);
        }
        String group = o.group().get();
        Map<String, List<String>> byValue = new LinkedHashMap<>();
        for (String h : eligible) {
            Optional<AttributeValue> value = v.node(h).attributes().get(group);
            value.ifPresent(x -> byValue.computeIfAbsent(x.toString(), k -> new ArrayList<>()).add(h));
        }
        boolean listed = !o.groupValues().isEmpty();
        List<String> values = listed ? o.groupValues() : new ArrayList<>(byValue.keySet());
        List<String> tried = new ArrayList<>();
        Fit best = null;
        for (String value : values) {
            Fit f = fill(o, job, v, byValue.getOrDefault(value, List.of()), at);
            if (!f.ok()) {
                tried.add(group + "=" + value + ": " + f.why());
            } else if (listed) {
                return new Fit(f.hosts(), group + "=" + value); // the user's order decides
            } else if (best == null || f.hosts().size() < best.hosts().size()) {
                best = new Fit(f.hosts(), group + "=" + value); // fewest hosts; a tie keeps the earlier value
            }
        }
        if (best != null) {
            return best;
        }
        return no(tried.isEmpty() ? "no eligible host has " + group : String.join("; ", tried));
    }

    private static Fit fill(Option o, PlacedJob job, ClusterView v, List<String> hosts, long at) {
        if (hosts.isEmpty()) {
            return no("no eligible host");
        }
        Fit f = o.wholeHosts() ? whole(o, job, v, hosts, at) : spread(o, job, v, hosts, at);
        if (f.ok() && !fits(o, job, v, f.hosts(), at)) {
            return no("the hosts chosen one by one cannot grant it together");
        }
        return f;
    }

    private static Fit spread(Option o, PlacedJob job, ClusterView v, List<String> hosts, long at) {
        int remaining = o.slots();
        Map<String, Integer> out = new LinkedHashMap<>();
        for (String h : hosts) {
            int k = Math.min(remaining, v.cluster().freeSlots(h, at, job.runtime()));
            k = k > 0 ? largest(o, job, v, h, k, at) : 0;
            if (k > 0) {
                out.put(h, k);
                remaining -= k;
                if (remaining == 0) {
                    return new Fit(out, "");
                }
            }
        }
        return no((o.slots() - remaining) + " of " + o.slots() + " slots free on " + hosts.size()
                + " eligible host" + (hosts.size() == 1 ? "" : "s"));
    }

    /** The most slots, at most {@code max}, that {@code host} can grant the request for (0 if none). */
    private static int largest(Option o, PlacedJob job, ClusterView v, String host, int max, long at) {
        if (fits(o, job, v, Map.of(host, max), at)) {
            return max; // the usual case: one check
        }
        int lo = 0; // invariant: lo fits (0 trivially), hi does not
        int hi = max;
        while (hi - lo > 1) {
            int mid = lo + (hi - lo) / 2;
            if (fits(o, job, v, Map.of(host, mid), at)) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private static Fit whole(Option o, PlacedJob job, ClusterView v, List<String> hosts, long at) {
        Map<Integer, List<String>> byCapacity = new LinkedHashMap<>();
        for (String h : hosts) {
            var cap = v.cluster().slots(h);
            if (cap.isEmpty() || cap.getAsInt() == 0 || o.slots() % cap.getAsInt() != 0) {
                continue;
            }
            int c = cap.getAsInt();
            if (v.cluster().freeSlots(h, at, job.runtime()) == c && fits(o, job, v, Map.of(h, c), at)) {
                byCapacity.computeIfAbsent(c, k -> new ArrayList<>()).add(h);
            }
        }
        int best = 0;
        for (Map.Entry<Integer, List<String>> e : byCapacity.entrySet()) {
            if (e.getValue().size() >= o.slots() / e.getKey() && e.getKey() > best) {
                best = e.getKey();
            }
        }
        if (best == 0) {
            return no("no " + o.slots() + " slots on whole free hosts of one capacity");
        }
        Map<String, Integer> out = new LinkedHashMap<>();
        for (String h : byCapacity.get(best).subList(0, o.slots() / best)) {
            out.put(h, best);
        }
        return new Fit(out, "");
    }

    private static boolean fits(Option o, PlacedJob job, ClusterView v, Map<String, Integer> on, long at) {
        JobSpec spec = o.spec(job.id(), on, job.runtime(), job.reserve());
        return v.cluster().fits(spec, at);
    }
}
