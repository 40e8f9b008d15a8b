// The fields of a realloc as a client sends them (RFC 51 and rsmapd's own), read from JSON and resolved
// against a cluster into a Realloc: shared by rsmap simulate and the daemon's REALLOC.
package rsmap.realloc;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.flux.Jobspec;
import rsmap.request.RequestList;

/**
 * {@code add} / {@code sub} (request language) or RFC 51's {@code spec_add} / {@code spec_sub} (a
 * Jobspec version 1: an object, or a string of JSON or YAML), and the exact instances to take away
 * ({@link InstanceNames}: {@code ids} or {@code R}). Two steps, as the daemon answers them differently:
 * {@link #read} checks the form (which members, of which JSON type: a fault is a malformed command),
 * {@link #resolve} the content (the request language, the jobspec, the R against the cluster: a fault is
 * a DENY). Both throw only {@link ParseException}; its problem names the member.
 *
 * @param add     the request language text of what to add ({@code add}, or {@code spec_add} read by
 *                {@link SpecRequest} once resolved)
 * @param specAdd the jobspec text of {@code spec_add}; never with {@code add}
 * @param named   the instances to take away, or with {@code sub} the ones it chooses from
 */
public record ReallocRequest(Optional<String> add, Optional<String> sub, Optional<String> specAdd,
                             Optional<String> specSub, InstanceNames named) {
    /** The members this type reads; a command's other members (job, tag, time...) are its caller's. */
    public static final Set<String> FIELDS = Set.of("add", "sub", "spec_add", "spec_sub", "ids", "R");

    public ReallocRequest {
        Objects.requireNonNull(add);
        Objects.requireNonNull(sub);
        Objects.requireNonNull(specAdd);
        Objects.requireNonNull(specSub);
        Objects.requireNonNull(named);
        if (add.isPresent() && specAdd.isPresent() || sub.isPresent() && specSub.isPresent()) {
            throw new IllegalArgumentException("realloc takes 'add' or 'spec_add', 'sub' or 'spec_sub', not both");
        }
        if (add.isEmpty() && sub.isEmpty() && specAdd.isEmpty() && specSub.isEmpty() && named.isEmpty()) {
            throw new IllegalArgumentException("realloc needs 'add', 'sub', 'spec_add', 'spec_sub', 'ids' or 'R'");
        }
    }

    /** {@link #read} then {@link #resolve}: the realloc of {@code job} tagged {@code tag}. */
    public static Realloc parse(JsonNode fields, String job, String tag, Cluster cluster, Limits limits)
            throws ParseException {
        return read(fields).resolve(job, tag, cluster, limits);
    }

    /**
     * The members of {@link #FIELDS} in {@code fields} (a JSON object; other members are not looked at).
     *
     * @throws ParseException when none of them is there, {@code add} comes with {@code spec_add} (or
     *                        {@code sub} with {@code spec_sub}), {@code ids} with {@code R}, or one is of
     *                        the wrong form; the input is {@code fields} as JSON
     */
    public static ReallocRequest read(JsonNode fields) throws ParseException {
        if (fields.has("add") && fields.has("spec_add") || fields.has("sub") && fields.has("spec_sub")) {
            throw InstanceNames.malformed(fields, "realloc takes 'add' or 'spec_add', 'sub' or 'spec_sub', not both");
        }
        Optional<String> add = text(fields, "add");
        Optional<String> sub = text(fields, "sub");
        Optional<String> specAdd = InstanceNames.document(fields, "spec_add", "a jobspec");
        Optional<String> specSub = InstanceNames.document(fields, "spec_sub", "a jobspec");
        InstanceNames named = InstanceNames.read(fields);
        if (add.isEmpty() && sub.isEmpty() && specAdd.isEmpty() && specSub.isEmpty() && named.isEmpty()) {
            throw InstanceNames.malformed(fields, "realloc needs 'add', 'sub', 'spec_add', 'spec_sub', 'ids' or 'R'");
        }
        return new ReallocRequest(add, sub, specAdd, specSub, named);
    }

    /**
     * The realloc against {@code cluster}'s complex table and host configuration.
     *
     * @throws ParseException for a request that does not parse (its own message), an invalid jobspec or
     *                        one naming no resource map ({@code spec_add: $.resources...}), or an R that
     *                        does not name instances of the cluster ({@code R: $.execution...})
     */
    public Realloc resolve(String job, String tag, Cluster cluster, Limits limits) throws ParseException {
        Optional<String> a = specAdd.isPresent() ? Optional.of(spec(specAdd.get(), "spec_add", limits)) : add;
        Optional<String> s = specSub.isPresent() ? Optional.of(spec(specSub.get(), "spec_sub", limits)) : sub;
        Optional<RequestList> addList = parse(a, cluster, limits);
        Optional<RequestList> subList = parse(s, cluster, limits);
        return new Realloc(job, tag, addList, subList, named.resolve(cluster, limits));
    }

    /**
     * An RFC 51 jobspec form as the request language; an invalid jobspec is refused with its JSON path,
     * one naming no resource map likewise.
     */
    private static String spec(String text, String key, Limits limits) throws ParseException {
        Jobspec js;
        try {
            js = Jobspec.parse(text, limits);
        } catch (ParseException e) {
            throw ParseException.atPath(key + ": " + e.problem(), e.input(), e.offset());
        }
        String request = SpecRequest.of(js);
        if (request.isEmpty()) {
            throw ParseException.atPath(key + ": $.resources: names no resource map with a count above 0"
                    + " (cores are not resource maps: rsmapd grants none)", text, 0);
        }
        return request;
    }

    private static Optional<RequestList> parse(Optional<String> request, Cluster cluster, Limits limits)
            throws ParseException {
        return request.isEmpty() ? Optional.empty()
                : Optional.of(RequestList.parse(request.get(), cluster.table(), limits));
    }

    /** A request language member: a string, not empty. */
    private static Optional<String> text(JsonNode fields, String key) throws ParseException {
        JsonNode v = fields.get(key);
        if (v == null) {
            return Optional.empty();
        }
        if (!v.isTextual()) {
            throw InstanceNames.malformed(fields, "'" + key + "' must be a string");
        }
        if (v.textValue().isEmpty()) {
            throw InstanceNames.malformed(fields, "'" + key + "' is empty");
        }
        return Optional.of(v.textValue());
    }
}
