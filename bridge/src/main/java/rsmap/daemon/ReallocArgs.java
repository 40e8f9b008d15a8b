// The arguments of REALLOC, RELEASE and REALLOC_CANCEL: which job, which tag, what to add and take away.
package rsmap.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import rsmap.ParseException;
import rsmap.alloc.Grant;
import rsmap.flux.Jobspec;
import rsmap.realloc.Realloc;
import rsmap.realloc.SpecRequest;
import rsmap.request.RequestList;
import rsmap.wire.Session;

/**
 * Two kinds of wrong: the form of the arguments (an unknown key, a tag that is no tag, ids that are not
 * host to map to identifiers) is an ERROR, like any command's; a request that does not read (bad
 * request language, an invalid RFC 51 jobspec) is the realloc's DENY answer, as RFC 51 answers an
 * unsatisfiable request. docs/protocol.md, "Dynamic reallocation".
 */
final class ReallocArgs {
    static final Set<String> REALLOC_KEYS = Set.of("job", "task", "tag", "add", "sub", "ids", "R", "spec_add", "spec_sub");
    static final Set<String> RELEASE_KEYS = Set.of("job", "task", "ids", "R");
    static final Set<String> CANCEL_KEYS = Set.of("job", "task", "tag");
    /** A client's matchtag: what realloc_cancel names. */
    private static final Pattern TAG = Pattern.compile("[A-Za-z0-9_.:@-]{1,64}");

    private ReallocArgs() {
    }

    /** The tag, or the command's TID as {@code tid-0000002a} when the client gave none. */
    static String tag(Args a, long tid, boolean required) throws Session.CommandException {
        String tag = a.string("tag", "");
        if (tag.isEmpty()) {
            if (required) {
                throw new Session.CommandException(a.command() + " needs \"tag\": the tag of the waiting realloc");
            }
            return String.format("tid-%08x", tid);
        }
        if (!TAG.matcher(tag).matches()) {
            throw new Session.CommandException(a.command() + ": \"tag\" is 1 to 64 of A-Z a-z 0-9 _ . : @ -, not "
                    + Args.quote(tag));
        }
        return tag;
    }

    /** The request's parts as read; the text that does not read is the realloc's DENY, with its reason. */
    record Read(Optional<Realloc> realloc, String refusal) {
    }

    /** REALLOC's request of {@code job} tagged {@code tag}; its form is checked first (ERROR). */
    static Read realloc(Args a, String job, String tag, HostState s) throws Session.CommandException {
        String add = a.string("add", null);
        String sub = a.string("sub", null);
        JsonNode specAdd = a.raw("spec_add");
        JsonNode specSub = a.raw("spec_sub");
        if (add != null && specAdd != null || sub != null && specSub != null) {
            throw new Session.CommandException("REALLOC takes \"add\" or \"spec_add\", \"sub\" or \"spec_sub\", not both");
        }
        if (a.has("ids") && a.has("R")) {
            throw new Session.CommandException("REALLOC names the instances to take away by \"ids\" or by \"R\", not both");
        }
        if (add == null && sub == null && specAdd == null && specSub == null && !a.has("ids") && !a.has("R")) {
            throw new Session.CommandException("REALLOC needs \"add\", \"sub\", \"spec_add\", \"spec_sub\", \"ids\" or \"R\"");
        }
        for (JsonNode spec : new JsonNode[] {specAdd, specSub}) {
            if (spec != null && !spec.isObject() && !spec.isTextual()) {
                throw new Session.CommandException("REALLOC: \"spec_add\" and \"spec_sub\" are RFC 51 jobspecs (a JSON "
                        + "object, or its text)");
            }
        }
        Grant ids = a.has("ids") ? ids(a.raw("ids"), "REALLOC") : Grant.NONE;
        try {
            if (a.has("R")) {
                ids = fromR(a.raw("R"), s);
            }
            if (specAdd != null) {
                add = spec(specAdd, "spec_add", s);
            }
            if (specSub != null) {
                sub = spec(specSub, "spec_sub", s);
            }
            return new Read(Optional.of(new Realloc(job, tag, parse(add, s), parse(sub, s), ids)), "");
        } catch (ParseException e) {
            // A jobspec's or R's problem names its JSON path; the request language's its column.
            boolean pathed = e.problem().startsWith("spec_") || e.problem().startsWith("R: ");
            return new Read(Optional.empty(), pathed ? e.problem() : "request: " + e.getMessage());
        }
    }

    /** RELEASE's instances: {@code ids} or {@code R}; empty: all the job was told to give back. */
    static Optional<Grant> released(Args a, HostState s) throws Session.CommandException {
        if (a.has("ids") && a.has("R")) {
            throw new Session.CommandException("RELEASE names the instances by \"ids\" or by \"R\", not both");
        }
        if (a.has("ids")) {
            return Optional.of(ids(a.raw("ids"), "RELEASE"));
        }
        if (a.has("R")) {
            try {
                return Optional.of(fromR(a.raw("R"), s));
            } catch (ParseException e) {
                throw new Session.CommandException("RELEASE: R: " + e.getMessage());
            }
        }
        return Optional.empty();
    }

    /** {"host":{"map":["id",...]}}, nothing empty. */
    static Grant ids(JsonNode v, String command) throws Session.CommandException {
        String shape = command + ": \"ids\" is an object of host to map to a list of identifiers, e.g. "
                + "{\"node01\":{\"gpu\":[\"1\"]}}";
        if (v == null || !v.isObject() || v.size() == 0) {
            throw new Session.CommandException(shape);
        }
        Map<String, Map<String, List<String>>> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> hs = v.fields(); hs.hasNext();) {
            Map.Entry<String, JsonNode> h = hs.next();
            if (!h.getValue().isObject() || h.getValue().size() == 0) {
                throw new Session.CommandException(shape);
            }
            for (Iterator<Map.Entry<String, JsonNode>> ms = h.getValue().fields(); ms.hasNext();) {
                Map.Entry<String, JsonNode> m = ms.next();
                if (!m.getValue().isArray() || m.getValue().size() == 0) {
                    throw new Session.CommandException(shape);
                }
                List<String> list = new ArrayList<>();
                for (JsonNode id : m.getValue()) {
                    if (!id.isTextual() || id.asText().isEmpty()) {
                        throw new Session.CommandException(shape);
                    }
                    list.add(id.asText());
                }
                out.computeIfAbsent(h.getKey(), k -> new LinkedHashMap<>()).put(m.getKey(), list);
            }
        }
        return new Grant(out);
    }

    private static Grant fromR(JsonNode r, HostState s) throws ParseException {
        String text = r.isTextual() ? r.textValue() : r.toString();
        throw new ParseException("R: not read yet", text, 0); // TODO(issue 13): RDelta's inverse
    }

    /** An RFC 51 jobspec form as the request language; invalid, or naming no map: refused with its path. */
    private static String spec(JsonNode spec, String key, HostState s) throws ParseException {
        String text = spec.isTextual() ? spec.textValue() : spec.toString();
        Jobspec js;
        try {
            js = Jobspec.parse(text, s.limits);
        } catch (ParseException e) {
            throw new ParseException(key + ": " + e.problem(), e.input(), e.offset());
        }
        String request = SpecRequest.of(js);
        if (request.isEmpty()) {
            throw new ParseException(key + ": $.resources: names no resource map with a count above 0"
                    + " (cores are not resource maps: rsmapd grants none)", text, 0);
        }
        return request;
    }

    private static Optional<RequestList> parse(String request, HostState s) throws ParseException {
        return request == null ? Optional.empty() : Optional.of(RequestList.parse(request, s.table, s.limits));
    }
}
