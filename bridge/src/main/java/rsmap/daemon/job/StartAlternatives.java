// JOB_START with alternatives ("on each host as a last check"): the scheduler placed the job
// here; of its requests, in the user's order, the first that can be granted now is, and only that one.
package rsmap.daemon.job;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import rsmap.ParseException;
import rsmap.daemon.records.Records;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;
import rsmap.request.RequestList;
import rsmap.wire.Code;
import rsmap.wire.Frame;

/**
 * {@code "alternatives":["gpu=4","gpu=2"]} instead of {@code "request"}. Every one must read first (one that
 * does not is the job's error, {@code request: alternative i: ...}); then each is tried as a JOB_START of its
 * own, in the order of {@code alternatives_policy} and then the user's, until one is granted: exactly one is ever granted, and the job's request is that one (a
 * retry of the same JOB_START is answered with it). The STATE adds {@code "alternative": i}. None can: one
 * ERROR naming why each cannot, so that the prolog reschedules the job.
 */
public final class StartAlternatives {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** PBS's alternatives design: "the usual number is less than 10". */
    static final int MAX = 64;

    private StartAlternatives() {
    }

    /** The requests of {@code "alternatives"}, each read against this host's complexes. */
    static List<String> read(JsonNode list, HostState s) throws Refusal {
        if (list == null || !list.isArray() || list.size() < 1 || list.size() > MAX) {
            throw Refusal.malformed("JOB_START: \"alternatives\" is a list of 1 to " + MAX + " requests");
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            if (!list.get(i).isTextual() || list.get(i).asText().isEmpty()) {
                throw Refusal.malformed("JOB_START: alternative " + i + " is a request (a string)");
            }
            try {
                RequestList.parse(list.get(i).asText(), s.table, s.limits);
            } catch (ParseException e) {
                throw Refusal.refused("request: alternative " + i + ": " + e.getMessage());
            }
            out.add(list.get(i).asText());
        }
        return out;
    }

    /** Grants the first of {@code requests} that can be granted now. */
    public static List<Frame> start(JobLifecycle lifecycle, HostState s, long tid, JobId id, String user, int slots,
                             List<String> requests) throws Refusal {
        Job held = s.job(id).orElse(null);
        if (held != null && requests.contains(held.request())) { // a retry after a lost answer
            return with(lifecycle.start(tid, id, user, held.request(), slots), requests.indexOf(held.request()));
        }
        List<String> why = new ArrayList<>();
        // The admin's order first (alternatives_policy), then the user's.
        List<rsmap.place.Option> options = new ArrayList<>();
        for (String r : requests) {
            try {
                options.add(rsmap.place.Option.fixed(RequestList.parse(r, s.table, s.limits), java.util.Map.of(s.host(),
                        slots)));
            } catch (ParseException e) {
                throw Refusal.refused("request: " + e.getMessage()); // read() read it already
            }
        }
        for (int i : s.config.alternativesPolicy().order(options)) {
            try {
                return with(lifecycle.start(tid, id, user, requests.get(i), slots), i);
            } catch (Records.JournalRefusal e) {
                throw e; // the disk, not the alternative: no other alternative can be written either
            } catch (Refusal e) {
                why.add(i + ": " + e.getMessage());
            }
        }
        throw Refusal.busy("job " + id + ": none of its " + requests.size() + " alternatives can be "
                + "granted now (" + String.join("; ", why) + ")");
    }

    /** The STATE with {@code "alternative": i} added to its JSON. */
    private static List<Frame> with(List<Frame> answer, int alternative) throws Refusal {
        Frame f = answer.get(0);
        List<String> args = new ArrayList<>();
        try {
            ObjectNode job = (ObjectNode) JSON.readTree(f.text(0));
            job.put("alternative", alternative);
            args.add(job.toString());
        } catch (IOException | ClassCastException e) {
            throw Refusal.internal("JOB_START: " + e.getMessage()); // our own JSON: never
        }
        for (int i = 1; i < f.args().size(); i++) {
            args.add(f.text(i));
        }
        List<Frame> out = new ArrayList<>(answer);
        out.set(0, Frame.of(f.tid(), Code.STATE.value(), args.toArray(new String[0])));
        return out;
    }
}
