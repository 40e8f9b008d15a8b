// A -l request list, gpu=4[same=id,scope=job],lic=1, as a job submits it.
package rsmap.request;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;

/**
 * The requests of one scope of a job. {@link #toString()} is the canonical form (full complex names,
 * parameters in the order id, same, scope, characteristics by name), which {@link #parse} reads back
 * to an equal list.
 */
public record RequestList(List<Request> requests) {
    public RequestList {
        requests = List.copyOf(requests);
    }

    public static RequestList parse(String text, ComplexTable table) throws ParseException {
        return parse(text, table, Limits.DEFAULT);
    }

    public static RequestList parse(String text, ComplexTable table, Limits limits) throws ParseException {
        return new RequestParser(text, table, limits).parse();
    }

    /** The resource map requests, in the order given. */
    public List<ResourceRequest> resourceRequests() {
        List<ResourceRequest> out = new ArrayList<>();
        for (Request r : requests) {
            if (r instanceof ResourceRequest) {
                out.add((ResourceRequest) r);
            }
        }
        return out;
    }

    /** The request for the named complex, if any. */
    public Optional<Request> find(String name) {
        return requests.stream().filter(r -> r.name().equals(name)).findFirst();
    }

    /**
     * Grid Engine's RSMAP manual, "How far the agreement reaches": a job which names one map in the master scope and in
     * the slave scope has to give the same scope= in both. Returns the problem, if any.
     */
    public static Optional<String> scopeConflict(RequestList master, RequestList slave) {
        for (ResourceRequest m : master.resourceRequests()) {
            Optional<Request> s = slave.find(m.name());
            if (s.isPresent() && s.get() instanceof ResourceRequest) {
                ResourceRequest sr = (ResourceRequest) s.get();
                if (sr.effectiveScope() != m.effectiveScope()) {
                    return Optional.of("resource map '" + m.name() + "' is requested with scope=" + m.effectiveScope()
                            + " in the master scope and scope=" + sr.effectiveScope() + " in the slave scope");
                }
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (Request r : requests) {
            b.append(b.length() > 0 ? "," : "").append(r);
        }
        return b.toString();
    }
}
