// One way a job may run: its requests, and fixed hosts or the slots to place on candidates.
package rsmap.place;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.alloc.JobSpec;
import rsmap.node.Filter;
import rsmap.request.RequestList;

/**
 * Either fixed ({@code hosts} given, as a plain submit) or placed ({@code slots} &gt; 0 on
 * {@code candidates}, all hosts when empty, which pass {@code filter}; with {@code group} every chosen
 * host has the same value of that attribute, one of {@code groupValues} when given; with
 * {@code wholeHosts} only hosts used to their full slot capacity). {@code label} names the option for
 * a site ranking ("" none). The placement rules are in docs/alternatives.md.
 */
public record Option(String label, RequestList request, Map<String, Integer> hosts, List<String> candidates,
                     int slots, Optional<Filter> filter, Optional<String> group, List<String> groupValues,
                     boolean wholeHosts) {
    public Option {
        java.util.Objects.requireNonNull(label);
        java.util.Objects.requireNonNull(request);
        java.util.Objects.requireNonNull(filter);
        java.util.Objects.requireNonNull(group);
        hosts = Collections.unmodifiableMap(new LinkedHashMap<>(hosts));
        candidates = List.copyOf(candidates);
        groupValues = List.copyOf(groupValues);
        if (hosts.isEmpty() == (slots == 0)) {
            throw new IllegalArgumentException("an option gives either 'hosts' or 'slots' (with 'candidates')");
        }
        if (slots < 0) {
            throw new IllegalArgumentException("'slots' must be 1 or more");
        }
        if (!hosts.isEmpty() && (!candidates.isEmpty() || filter.isPresent() || group.isPresent() || wholeHosts)) {
            throw new IllegalArgumentException("'candidates', 'filter', 'group' and 'whole_hosts' go with 'slots',"
                    + " not with fixed 'hosts'");
        }
        if (!groupValues.isEmpty() && group.isEmpty()) {
            throw new IllegalArgumentException("'group_values' needs 'group'");
        }
    }

    /** A fixed option: the scheduler's hosts. */
    public static Option fixed(RequestList request, Map<String, Integer> hosts) {
        return new Option("", request, hosts, List.of(), 0, Optional.empty(), Optional.empty(), List.of(), false);
    }

    /** A placed option on every host. */
    public static Option placed(RequestList request, int slots) {
        return new Option("", request, Map.of(), List.of(), slots, Optional.empty(), Optional.empty(), List.of(),
                false);
    }

    public boolean isFixed() {
        return !hosts.isEmpty();
    }

    /** The slots the option asks for in all: what "fewest resources first" compares. */
    public long totalSlots() {
        return isFixed() ? hosts.values().stream().mapToLong(Integer::longValue).sum() : slots;
    }

    /** The job {@code id} run this way on {@code on}; the first host is the master. */
    JobSpec spec(String id, Map<String, Integer> on, long runtime, boolean reserve) {
        return new JobSpec(id, request, on, on.keySet().iterator().next(), runtime, Optional.empty(), reserve);
    }
}
