// A host's global part, chosen once at construction: without an authority there is none; with one, the
// AuthorityLink asks it for the global maps' instances, gives them back and forwards the host's events.
package rsmap.daemon.job;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Optional;
import rsmap.alloc.Grant;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Refusal;

/**
 * What the host's rooms ask of "the global part" without ever asking whether there is one: {@link #NONE}
 * (no {@code authority} in rsmapd.conf: every request is the host's alone) or the {@code AuthorityLink}.
 * The authority's own daemon has none: it is the global part of its hosts.
 */
public interface GlobalPart extends AutoCloseable {
    /** Work a JOB_START does while the authority decides its global part: the host forces its journal. */
    interface Meanwhile {
        void run() throws Refusal;
    }

    /**
     * The grant of job {@code id}'s global part {@code request} (never empty: the host asks only for a
     * request that names global maps), running {@code meanwhile} while it is decided. Under the daemon's lock.
     */
    Grant start(JobId id, String user, int slots, String request, Meanwhile meanwhile) throws Refusal;

    /** Gives job {@code id}'s global instances back, now or as soon as the authority can be told. */
    void end(JobId id);

    /**
     * Whether a job's scope=job groups are agreed with an authority; without one ({@link #NONE}) they are
     * per host (docs/cluster.md). Takes no lock: every JOB_START and JOB_END asks.
     */
    default boolean agreesGroups() {
        return this != NONE;
    }

    /**
     * The groups job {@code id}'s scope=job requests are held to on every host: those recorded for it, else
     * {@code proposed}, recorded now ({@link GroupAgreement}). Under the daemon's lock.
     */
    default rsmap.alloc.GroupKeys groupKeys(JobId id, rsmap.alloc.GroupKeys proposed) throws Refusal {
        return proposed;
    }

    /**
     * One of this host's events: its kind ({@link EventHub#KINDS}) and its DIFF's JSON, made when needed.
     * Nothing is told by default (no authority; the authority's own global part).
     */
    default void event(String kind, java.util.function.Supplier<String> diffJson) {
    }

    /** What QUERY shows of the global part, under {@code "authority"}; empty (the default): nothing. */
    default Optional<ObjectNode> view() {
        return Optional.empty();
    }

    /**
     * Whether the host's state alone makes QUERY's answer (then it may be cached until the next change).
     * Asked on the selector thread (Commands#quick): it must take no lock that anything holds long.
     */
    default boolean cacheable() {
        return view().isEmpty();
    }

    /** Starts working in the background (connecting, forwarding); nothing by default. */
    default void start() {
    }

    /** Stops what {@link #start} began; nothing by default. */
    @Override
    default void close() {
    }

    /** No authority: nothing is global, nothing is told. */
    GlobalPart NONE = new GlobalPart() {
        @Override
        public Grant start(JobId id, String user, int slots, String request, Meanwhile meanwhile)
                throws Refusal {
            throw Refusal.refused("job " + id + ": " + request + " names no map of this host, and "
                    + "rsmapd.conf names no authority");
        }

        @Override
        public void end(JobId id) {
        }
    };
}
