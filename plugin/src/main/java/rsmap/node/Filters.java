// The filters every job must pass together: the admin limit (the seed's queue/server limits) and the job's.
package rsmap.node;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * PBS's alternatives design: "The filter concept can also be extended to be used as queue/server limits". A host
 * passes when it passes every filter, checked in order; a failure names the filter it came from, so
 * a job refused by the admin limit is told so. The daemon wiring comes later.
 */
public record Filters(List<Entry> entries) {
    /** The source of the admin limit, configured for every job. */
    public static final String ADMIN = "admin";
    /** The source of the job's own filter. */
    public static final String JOB = "job";

    public static final Filters NONE = new Filters(List.of());

    /** A filter and where it comes from. */
    public record Entry(String source, Filter filter) {
        public Entry {
            Objects.requireNonNull(source);
            Objects.requireNonNull(filter);
        }
    }

    public Filters {
        entries = List.copyOf(entries);
    }

    /** Both must pass: the admin limit first, then the job's filter. */
    public static Filters combine(Filter admin, Filter job) {
        return new Filters(List.of(new Entry(ADMIN, admin), new Entry(JOB, job)));
    }

    /** The admin limit, if any, and the job's filter, if any. */
    public static Filters combine(Optional<Filter> admin, Optional<Filter> job) {
        List<Entry> out = new ArrayList<>(2);
        admin.ifPresent(f -> out.add(new Entry(ADMIN, f)));
        job.ifPresent(f -> out.add(new Entry(JOB, f)));
        return new Filters(out);
    }

    /** Whether {@code node} passes every filter. */
    public boolean test(Node node) {
        for (int i = 0, n = entries.size(); i < n; i++) {
            if (!entries.get(i).filter().test(node)) {
                return false;
            }
        }
        return true;
    }

    /** The verdict of the first filter {@code node} fails, else a pass. */
    public Verdict evaluate(Node node) {
        for (Entry e : entries) {
            Verdict v = e.filter().evaluate(node, e.source());
            if (!v.passed()) {
                return v;
            }
        }
        return Verdict.pass(node.name());
    }

    /** Each host's verdict, in order. */
    public List<Verdict> evaluate(Collection<Node> nodes) {
        List<Verdict> out = new ArrayList<>(nodes.size());
        for (Node n : nodes) {
            out.add(evaluate(n));
        }
        return out;
    }
}
