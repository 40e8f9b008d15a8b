// Why a request can or cannot be served on a host right now, instance by instance and group by group.
package rsmap.alloc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.complex.Value;
import rsmap.request.CharacteristicFilter;
import rsmap.request.ResourceRequest;

/**
 * The answer to "why is my job pending?" for one request on one host: for each requested map, the
 * state of every instance (free, held by a job, reserved, or filtered out by id= or a characteristic),
 * the same= groups with their free sizes, and a verdict.
 */
public record Explanation(String host, boolean canStart, List<MapReport> maps) {
    public Explanation {
        maps = List.copyOf(maps);
    }

    /** One map (same is empty without same=): where it is served from, how many instances are needed, and why they are or are not there. */
    public record MapReport(String map, String pool, int needed, String same, List<InstanceReport> instances,
                            List<GroupReport> groups, boolean canStart, String verdict) {
        public MapReport {
            instances = List.copyOf(instances);
            groups = List.copyOf(groups);
        }
    }

    /**
     * @param state free, held, reserved, tainted, excluded or filtered; {@code why} says by what
     * @param job   the job that {@code why} names as holding the instance or its excluding partner ("" for none),
     *              as data, so that a viewer who may not see that job can be shown it masked
     */
    public record InstanceReport(int index, String id, String state, String why,
                                 @com.fasterxml.jackson.annotation.JsonIgnore String job) {
        public InstanceReport {
            java.util.Objects.requireNonNull(job, "job");
        }

        /** The same report with {@code why} read otherwise (a viewer's masked holder). */
        public InstanceReport withWhy(String why) {
            return new InstanceReport(index, id, state, why, job);
        }
    }

    /** A same= group: its key, how many of its instances qualify and are free, and whether that is enough. */
    public record GroupReport(String key, int free, int needed, boolean enough) {
    }

    /** Explains every resource map request of {@code request} on {@code host} at the cluster's time. */
    static Explanation of(Cluster cluster, List<ResourceRequest> requests, String host) {
        return of(cluster, requests, host, GroupKeys.NONE);
    }

    /** As {@link #of(Cluster, List, String)}, scope=job requests held to the groups {@code keys} pins. */
    static Explanation of(Cluster cluster, List<ResourceRequest> requests, String host, GroupKeys keys) {
        List<MapReport> maps = new ArrayList<>();
        boolean all = true;
        for (ResourceRequest r : requests) {
            MapReport m = report(cluster, r, host, keys.pinOf(r));
            all &= m.canStart();
            maps.add(m);
        }
        return new Explanation(host, all, maps);
    }

    private static MapReport report(Cluster cluster, ResourceRequest r, String host, Optional<String> pin) {
        Optional<Pool> serving = cluster.configured().serving(host, r.name());
        String same = r.same().map(Object::toString).orElse("");
        if (serving.isEmpty()) {
            return new MapReport(r.name(), host, r.amount(), same, List.of(), List.of(), false,
                    unserved(host, r.name()));
        }
        Pool pool = serving.get();
        long now = cluster.now();
        boolean[] free = new boolean[pool.size()];
        List<InstanceReport> instances = new ArrayList<>();
        for (int i = 0; i < pool.size(); i++) {
            String filtered = filteredBy(r, pool, i);
            String state;
            String why;
            String job = "";
            if (filtered != null) {
                state = "filtered";
                why = filtered;
            } else if (pool.heldBy[i] != null) {
                state = "held";
                job = pool.heldBy[i];
                why = "by job " + pool.heldBy[i]
                        + (pool.states[i] == InstanceState.RELEASING ? ", being given back" : "")
                        + (pool.taint[i] != null ? "; tainted (" + pool.taint[i] + ")" : "");
            } else if (pool.taint[i] != null) {
                state = "tainted";
                why = pool.taint[i];
            } else {
                Hold h = holdNow(pool, i, now);
                Exclusions.Block excluded = Exclusions.block(pool, i, pool.siblings);
                if (excluded != null) {
                    state = "excluded";
                    why = excluded.reason();
                    job = excluded.job() == null ? "" : excluded.job();
                } else if (h != null) {
                    state = "reserved";
                    why = (h.kind() == Hold.Kind.AR ? "by advance reservation " : "for waiting job ") + h.owner()
                            + " over [" + h.start() + ", " + (h.end() == JobSpec.UNLIMITED ? "unlimited" : h.end()) + ")";
                } else {
                    state = "free";
                    why = "";
                    free[i] = true;
                }
            }
            instances.add(new InstanceReport(i, pool.instances[i].id(), state, why, job));
        }
        int needed = r.amount();
        List<GroupReport> groups = new ArrayList<>();
        Map<Pool, Integer> needs = new LinkedHashMap<>();
        needs.put(pool, needed);
        Map<Pool, boolean[]> available = new LinkedHashMap<>();
        available.put(pool, free);
        Optional<Map<Pool, int[]>> picks = Placement.place(r, pin, needs, available);
        String verdict;
        if (r.same().isPresent()) {
            Groups g = pool.groups(r.same().get());
            int[] sizes = Placement.groupSizes(Placement.qualifying(pool, r, free), g);
            int largest = -1;
            for (int k = 0; k < sizes.length; k++) {
                groups.add(new GroupReport(String.valueOf(g.keys[k]), sizes[k], needed, sizes[k] >= needed));
                if (largest < 0 || sizes[k] > sizes[largest]) {
                    largest = k;
                }
            }
            int held = pin.map(g::named).orElse(-1);
            verdict = picks.isPresent() ? "can start now with " + ids(pool, picks.get().get(pool))
                    : pin.isPresent() ? (held < 0 ? "the job's group " + r.same().get() + "=" + pin.get()
                    + " (chosen once for the whole job) is not on this host"
                    : "the job's group " + r.same().get() + "=" + pin.get() + " (chosen once for the whole job) has "
                    + sizes[held] + " free matching instance" + (sizes[held] == 1 ? "" : "s") + " here, needs " + needed)
                    : largest < 0 ? "no instance carries " + r.same().get() + ", so no group can form"
                    : "no group large enough: needs " + needed + " free instances agreeing on " + r.same().get()
                    + ", the largest group (" + g.keys[largest] + ") has " + sizes[largest];
        } else {
            int count = 0;
            for (boolean f : free) {
                count += f ? 1 : 0;
            }
            verdict = picks.isPresent() ? "can start now with " + ids(pool, picks.get().get(pool))
                    : "needs " + needed + " free matching instance" + (needed == 1 ? "" : "s") + ", " + count
                    + " available";
        }
        if (picks.isEmpty()) {
            verdict += tainted(instances);
        }
        return new MapReport(r.name(), pool.host, needed, same, instances, groups, picks.isPresent(), verdict);
    }

    /** "; tainted: 0 (nvml: Xid 79 at 12:03:05)" for the tainted identifiers the request could have had, once each. */
    private static String tainted(List<InstanceReport> instances) {
        Map<String, String> why = new LinkedHashMap<>();
        instances.stream().filter(i -> i.state().equals("tainted")).forEach(i -> why.putIfAbsent(i.id(), i.why()));
        if (why.isEmpty()) {
            return "";
        }
        List<String> each = new ArrayList<>();
        why.forEach((id, w) -> each.add(id + " (" + w + ")"));
        return "; tainted: " + String.join(", ", each);
    }

    private static String ids(Pool pool, int[] idx) {
        return String.join(" ", pool.idsOf(idx));
    }

    /** Why a map cannot be served on a host at all (Grid Engine's RSMAP manual: the job is refused). */
    static String unserved(String host, String map) {
        return "host " + host + " has no resource map " + map + ", and neither has the global host";
    }

    /**
     * Why {@code job} cannot start now: {@code map: verdict} for each map that cannot start on a host of
     * the job, joined by "; " (a global map's verdict, the same from every host, once).
     */
    static String whyNot(Cluster cluster, JobSpec job) {
        Set<String> why = new LinkedHashSet<>();
        for (String host : job.hosts().keySet()) {
            of(cluster, job.request().resourceRequests(), host, job.keys()).maps().stream().filter(m -> !m.canStart())
                    .forEach(m -> why.add(m.map() + ": " + m.verdict()));
        }
        return String.join("; ", why);
    }

    private static Hold holdNow(Pool pool, int i, long now) {
        for (Hold h : pool.holds) {
            if (h.end() > now && h.covers(i)) {
                return h;
            }
        }
        return null;
    }

    private static String filteredBy(ResourceRequest r, Pool pool, int i) {
        if (r.id().isPresent() && !r.id().get().matches(pool.instances[i].id())) {
            return "id=" + r.id().get() + " does not match";
        }
        for (CharacteristicFilter f : r.filters()) {
            if (!f.matches(pool.instances[i].characteristics())) {
                Optional<Value> has = pool.instances[i].characteristics().get(f.name());
                return has.isEmpty() ? "has no " + f.name()
                        : f.name() + "=" + has.get().text() + " does not satisfy " + f.name() + " "
                        + f.complex().relop().symbol() + " " + f.requested().text() + " (requested " + f.requested().text()
                        + " " + f.complex().relop().symbol() + " configured " + has.get().text() + ")";
            }
        }
        if (r.same().isPresent() && !r.same().get().isId() && pool.groups(r.same().get()).groupOf[i] < 0) {
            return "has no " + r.same().get() + " to agree on";
        }
        return null;
    }

    /** The human form, for rsmap simulate --human. */
    public String toHuman() {
        StringBuilder b = new StringBuilder();
        for (MapReport m : maps) {
            b.append(m.map()).append(" on ").append(m.pool()).append(": needs ").append(m.needed());
            if (!m.same().isEmpty()) {
                b.append(" agreeing on ").append(m.same());
            }
            b.append('\n');
            for (InstanceReport i : m.instances()) {
                b.append(String.format("  %-12s %-9s %s", i.id(), i.state(), i.why()).stripTrailing()).append('\n');
            }
            for (GroupReport g : m.groups()) {
                b.append(String.format("  group %s: %d free of %d needed%s", g.key(), g.free(), g.needed(),
                        g.enough() ? " (enough)" : "")).append('\n');
            }
            b.append("  => ").append(m.verdict()).append('\n');
        }
        return b.toString();
    }
}
