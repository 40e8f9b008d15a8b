// The arguments of REALLOC, RELEASE and REALLOC_CANCEL: which job, which tag, what to add and take away.
package rsmap.daemon.job;

import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import rsmap.Hex;
import rsmap.ParseException;
import rsmap.alloc.Grant;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Refusal;
import rsmap.realloc.InstanceNames;
import rsmap.realloc.Realloc;
import rsmap.realloc.ReallocRequest;
import rsmap.daemon.state.JobId;

/**
 * Two kinds of wrong, read by the core's own readers ({@link ReallocRequest}, {@link InstanceNames}):
 * the form of the arguments (an unknown key, a tag that is no tag, ids that are not host to map to
 * identifiers, {@code add} with {@code spec_add}) is an ERROR, like any command's; a request that does not
 * read against this host (bad request language, an invalid RFC 51 jobspec, an R naming no instance here)
 * is the realloc's DENY, as RFC 51 answers an unsatisfiable request. docs/protocol.md, "Dynamic
 * reallocation".
 */
public final class ReallocArgs {
    public static final Set<String> REALLOC_KEYS = Set.of("job", "task", "tag", "add", "sub", "ids", "R", "spec_add", "spec_sub",
            "filter");
    public static final Set<String> RELEASE_KEYS = Set.of("job", "task", "ids", "R");
    public static final Set<String> CANCEL_KEYS = Set.of("job", "task", "tag");
    /** A client's matchtag: what realloc_cancel names. */
    private static final Pattern TAG = Pattern.compile("[A-Za-z0-9_.:@-]{1,64}");

    private ReallocArgs() {
    }

    /** The tag, or the command's TID as {@code tid-0000002a} when the client gave none. */
    public static String tag(Args a, long tid, boolean required) throws Refusal {
        String tag = a.string("tag", "");
        if (tag.isEmpty()) {
            if (required) {
                throw Refusal.malformed(a.command() + " needs \"tag\": the tag of the waiting realloc");
            }
            return "tid-" + Hex.of(tid, 8);
        }
        if (!TAG.matcher(tag).matches()) {
            throw Refusal.malformed(a.command() + ": \"tag\" is 1 to 64 of A-Z a-z 0-9 _ . : @ -, not "
                    + Args.quote(tag));
        }
        return tag;
    }

    /** The request as read: the realloc, or why it is denied. */
    public record Read(Optional<Realloc> realloc, String refusal) {
    }

    /** REALLOC's request of {@code job} tagged {@code tag}: its form is checked first (ERROR), then its content. */
    public static Read realloc(Args a, JobId job, String tag, HostState s) throws Refusal {
        if (a.has("filter")) { // a grow may carry a node filter this host must pass (else DENY)
            try {
                FilterCheck.admit(s.config.filter(), FilterCheck.parse(a.string("filter", ""),
                        s.config.attributeTypes(), s.limits), s.node());
            } catch (Refusal e) {
                return new Read(Optional.empty(), e.getMessage());
            }
        }
        ReallocRequest request;
        try {
            com.fasterxml.jackson.databind.node.ObjectNode n = a.node().deepCopy();
            n.remove("filter");
            request = ReallocRequest.read(n);
        } catch (ParseException e) {
            throw Refusal.malformed("REALLOC: " + e.problem());
        }
        try {
            Realloc r = request.resolve(job.toString(), tag, s.cluster(), s.limits);
            for (Optional<rsmap.request.RequestList> part : java.util.List.of(r.add(), r.sub())) {
                if (part.isPresent() && !s.split(part.get(), true).requests().isEmpty()) {
                    // TODO: forward a realloc's global part to the authority, as JOB_START's is.
                    return new Read(Optional.empty(), "global maps (" + s.split(part.get(), true) + ") are granted by "
                            + "the authority " + s.config.authority() + ": a running job cannot grow or shrink them yet"
                            + " (docs/cluster.md)");
                }
            }
            return new Read(Optional.of(r), "");
        } catch (ParseException e) {
            // A jobspec's or R's problem names its JSON path; the request language's its column.
            return new Read(Optional.empty(), e.atPath() ? e.problem() : "request: " + e.getMessage());
        }
    }

    /** RELEASE's instances: {@code ids} or {@code R}; empty: all the job was told to give back. */
    public static Optional<Grant> released(Args a, HostState s) throws Refusal {
        InstanceNames named;
        try {
            named = InstanceNames.read(a.node());
        } catch (ParseException e) {
            throw Refusal.malformed("RELEASE: " + e.problem());
        }
        if (named.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(named.resolve(s.cluster(), s.limits));
        } catch (ParseException e) {
            throw Refusal.refused("RELEASE: " + e.problem());
        }
    }
}
