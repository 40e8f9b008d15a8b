// The event streams of START_EVENTS: per session its filters, its open transaction, and the diffs it
// is sent; a client that reads too slowly loses its stream, never the daemon its pace.
package rsmap.daemon.job;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;
import rsmap.wire.Category;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

/**
 * the PTP proxy protocol, "Start events": full state first, then only changes (DIFF events), all with the TID of the
 * START_EVENTS command, until STOP_EVENTS (OK for the stream, then OK for the stop) or QUIT. "Set event
 * filters" limits a session's stream by {@code map}, {@code job}, {@code user} and {@code event} kind.
 * Not thread-safe: the daemon calls it under its own lock, which also orders the events.
 */
public final class EventHub {
    /** The filter keys SET_FILTERS takes, and the kinds of events. */
    static final List<String> KEYS = List.of("map", "job", "user", "event");
    /** Where every event also goes: the host's global part (its authority, or nowhere). */
    private final GlobalPart forward;

    public EventHub(GlobalPart forward) {
        this.forward = forward;
    }
    public static final List<String> KINDS = List.of("grant", "release", "config", "alloc", "resource-update", "free", "taint",
            "untaint");

    /** What one session wants to see. Empty sets mean "everything". */
    public record Filters(Map<String, Set<String>> byKey, Set<JobId> jobs) {
        public static final Filters NONE = new Filters(Map.of());

        /** {@code jobs}: the "job" filter's values read as job ids once (one that is none matches no job). */
        public Filters(Map<String, Set<String>> byKey) {
            this(byKey, jobsOf(byKey.getOrDefault("job", Set.of())));
        }

        private static Set<JobId> jobsOf(Set<String> texts) {
            Set<JobId> out = new LinkedHashSet<>();
            texts.forEach(t -> JobId.parse(t).ifPresent(out::add));
            return Set.copyOf(out);
        }

        /** Whether an event about these maps, this job and user, of this kind, passes. */
        boolean pass(String kind, Set<String> maps, JobId job, String user) {
            return allows("event", Set.of(kind)) && allows("map", maps)
                    && (job == null || allowsJob(job)) && (user == null || allows("user", Set.of(user)));
        }

        boolean passJob(JobId job, String user, Set<String> maps) {
            return allowsJob(job) && allows("user", Set.of(user)) && allows("map", maps);
        }

        boolean passMap(String map) {
            return allows("map", Set.of(map));
        }

        private boolean allows(String key, Set<String> values) {
            Set<String> wanted = byKey.get(key);
            if (wanted == null || wanted.isEmpty()) {
                return true;
            }
            for (String v : values) {
                if (wanted.contains(v)) {
                    return true;
                }
            }
            return false;
        }

        /** A filter on job 7 also shows its array tasks 7.1, 7.2, ... */
        private boolean allowsJob(JobId job) {
            Set<String> wanted = byKey.get("job");
            return wanted == null || wanted.isEmpty() || jobs.contains(job)
                    || !job.task().isEmpty() && jobs.contains(job.withoutTask());
        }

        public ObjectNode toJson(ObjectNode into) {
            for (String k : KEYS) {
                var arr = into.putArray(k);
                byKey.getOrDefault(k, Set.of()).forEach(arr::add);
            }
            return into;
        }

        /** {"map":["gpu"],"job":["7"],"user":["alice"],"event":["grant"]}; keys left out mean all. */
        public static Filters parse(JsonNode n) throws Refusal {
            Map<String, Set<String>> out = new LinkedHashMap<>();
            for (Iterator<String> it = n.fieldNames(); it.hasNext();) {
                String key = it.next();
                if (!KEYS.contains(key)) {
                    throw Refusal.malformed("unknown filter '" + key + "' (" + String.join(", ", KEYS) + ")");
                }
                JsonNode values = n.get(key);
                if (!values.isArray()) {
                    throw Refusal.malformed("filter '" + key + "' is a list of strings");
                }
                Set<String> set = new LinkedHashSet<>();
                for (JsonNode v : values) {
                    if (!v.isTextual() || v.asText().isEmpty()) {
                        throw Refusal.malformed("filter '" + key + "' is a list of non-empty strings");
                    }
                    if (key.equals("event") && !KINDS.contains(v.asText())) {
                        throw Refusal.malformed("filter 'event': unknown kind '" + v.asText() + "' ("
                                + String.join(", ", KINDS) + ")");
                    }
                    set.add(v.asText());
                }
                out.put(key, Set.copyOf(set));
            }
            return new Filters(Map.copyOf(out));
        }
    }

    /** One session's stream: open when {@code tid} is not null. */
    public static final class Stream {
        final Session session;
        public Filters filters = Filters.NONE;
        public Long tid;

        Stream(Session session) {
            this.session = session;
        }
    }

    private final Map<Session, Stream> streams = new LinkedHashMap<>();

    public Stream of(Session session) {
        return streams.computeIfAbsent(session, Stream::new);
    }

    public void forget(Session session) {
        streams.remove(session);
    }

    /** Ends the open stream of {@code session} with an OK for its START_EVENTS; false if none was open. */
    public boolean stop(Session session) {
        Stream s = streams.get(session);
        if (s == null || s.tid == null) {
            return false;
        }
        session.post(Session.ok(s.tid), true);
        s.tid = null;
        return true;
    }

    /**
     * Sends one change to every open stream it passes. {@code visible} says whether a session's peer
     * may see it at all (a job owner sees only its own jobs).
     */
    public void publish(String kind, Set<String> maps, JobId job, String user, java.util.function.Supplier<ObjectNode> diff,
                 java.util.function.Predicate<Session> visible) {
        List<Stream> dropped = new ArrayList<>();
        // Built for the first who wants it: no stream open and no authority, no JSON on the job path.
        String[] text = {null};
        java.util.function.Supplier<String> once = () -> text[0] != null ? text[0] : (text[0] = diff.get().toString());
        forward.event(kind, once);
        for (Stream s : streams.values()) {
            if (s.tid == null || !s.filters.pass(kind, maps, job, user) || !visible.test(s.session)) {
                continue;
            }
            if (!s.session.post(Frame.of(s.tid, Code.DIFF.value(), once.get()), false)) {
                dropped.add(s);
            }
        }
        for (Stream s : dropped) {
            s.session.post(Session.error(s.tid, "event stream dropped: the client read too slowly; send START_EVENTS"
                    + " again for the full state", Category.BUSY), true);
            s.tid = null;
        }
    }
}
