// The argument of JOB_START, read in one place for both roles: which job, whose, how many slots, what it
// asks (a request, or alternatives) and where it may run (its filter).
package rsmap.daemon.job;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import rsmap.daemon.config.Names;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;
import rsmap.node.Filter;
import rsmap.wire.Code;
import rsmap.wire.Frame;

/**
 * docs/protocol.md, JOB_START: {@code {job, task?, user?, slots?, request | alternatives, filter?}}; an
 * authority takes a host's JOB_START with {@code "host"} and without alternatives (the host chose one).
 * A job with neither request nor alternatives needs a filter: checked, nothing to grant.
 */
public record JobStartArgs(JobId id, String user, int slots, String request, Optional<Filter> filter,
                    List<String> alternatives) {
    /** The keys of a host's JOB_START (anything else is an ERROR). */
    public static final Set<String> HOST_KEYS = Set.of("job", "task", "user", "slots", "request", "filter", "alternatives");
    /** On an authority, a host's JOB_START names the host. */
    public static final Set<String> AUTHORITY_KEYS = Set.of("host", "job", "task", "user", "slots", "request", "filter");

    public JobStartArgs {
        alternatives = List.copyOf(alternatives);
    }

    /** The command's argument with {@code keys} allowed, each value checked, in the order the errors say. */
    public static JobStartArgs read(Frame c, Set<String> keys, JobId.Reader ids, HostState s) throws Refusal {
        Args a = Args.of(Code.JOB_START.name(), c, keys);
        JobId id = ids.read(a);
        String request = a.string("request", "");
        int slots = a.integer("slots", 1, 1, 1_000_000);
        String user = a.string("user", "");
        Optional<Filter> filter = FilterCheck.parse(a.string("filter", null), s.config.attributeTypes(), s.limits);
        List<String> alternatives = a.has("alternatives")
                ? StartAlternatives.read(a.node().get("alternatives"), s) : List.of();
        if (!alternatives.isEmpty() && !request.isEmpty()) {
            throw Refusal.malformed("JOB_START takes \"request\" or \"alternatives\", not both");
        }
        if (request.isEmpty() && filter.isEmpty() && alternatives.isEmpty()) {
            throw Refusal.malformed("JOB_START needs \"request\"");
        }
        if (!user.isEmpty() && !Names.user(user)) {
            throw Refusal.malformed("\"user\" is the job owner's name, not " + Args.quote(user));
        }
        return new JobStartArgs(id, user, slots, request, filter, alternatives);
    }

    /** Only a filter: checked, nothing to grant (the starter enters the job bare). */
    public boolean onlyFilter() {
        return request.isEmpty() && alternatives.isEmpty();
    }
}
