// A host's connection to its authority, INIT done (and authenticated), and what opens one: the transport
// under AuthorityLink's state machine, which Failover implements over one or several authorities.
package rsmap.daemon.link;

import java.io.IOException;
import java.util.List;
import rsmap.wire.Client;
import rsmap.wire.Code;
import rsmap.wire.Frame;

interface AuthorityChannel extends AutoCloseable {
    /** Sends without waiting; {@link #receive} reads the answer (nothing else is sent in between). */
    long send(Code code, String json) throws IOException;

    List<Frame> receive(long tid) throws IOException, Client.Refusal;

    /** The authority this channel reached (one of several: {@link Failover}); empty when not told. */
    default String address() {
        return "";
    }

    default List<Frame> call(Code code, String json) throws IOException, Client.Refusal {
        return receive(send(code, json));
    }

    @Override
    void close();

    /** Opens a channel to the authority. */
    interface Connector {
        AuthorityChannel open() throws IOException, Client.Refusal;

        /** The ceiling of the backoff between connects to one authority. */
        long MAX_BACKOFF_MS = 30_000;

        /** The backoff's ceiling: lower with standbys ({@link Failover}), so that a takeover is found soon. */
        default long maxBackoffMs() {
            return MAX_BACKOFF_MS;
        }
    }
}
