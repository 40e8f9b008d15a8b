// JOB_START's node filter: the admin limit of rsmapd.conf and the job's "filter", checked against
// this host's attributes before anything is granted.
package rsmap.daemon.job;

import java.util.Optional;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.daemon.state.Refusal;
import rsmap.node.AttributeTypes;
import rsmap.node.Filter;
import rsmap.node.Filters;
import rsmap.node.Node;
import rsmap.node.Verdict;

/**
 * Two refusals the prolog tells apart (rsmap-hook.c): a filter that does not read is the job's fault
 * ({@code filter: column C: ...}, exit 100, like {@code request:}); a host that fails a filter was chosen
 * wrongly by the scheduler ({@code filter: job filter fails on node01: ...} or {@code filter: admin limit
 * fails on ...}, exit 99: reschedule elsewhere). Fail closed: a host that fails is never granted.
 */
public final class FilterCheck {
    /** What every failure's reason starts with after {@code filter: }; the hook keys on these. */
    static final String JOB_FAILS = "job filter fails on ";
    static final String ADMIN_FAILS = "admin limit fails on ";

    private FilterCheck() {
    }

    /** The job's filter read with the declared types; a refusal names its column. */
    static Optional<Filter> parse(String text, AttributeTypes types, Limits limits) throws Refusal {
        if (text == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(Filter.parse(text, types, limits));
        } catch (ParseException e) {
            throw Refusal.refused("filter: " + e.getMessage());
        }
    }

    /** Refuses when {@code node} fails the admin limit or the job's filter, naming which and the attribute. */
    public static void admit(Optional<Filter> admin, Optional<Filter> job, Node node) throws Refusal {
        if (admin.isEmpty() && job.isEmpty()) {
            return;
        }
        Verdict v = Filters.combine(admin, job).evaluate(node);
        if (v.passed()) {
            return;
        }
        Verdict.Failure f = v.failure().orElseThrow();
        throw Refusal.busy("filter: " + (f.source().equals(Filters.ADMIN) ? ADMIN_FAILS : JOB_FAILS)
                + node.name() + ": " + f.why());
    }
}
