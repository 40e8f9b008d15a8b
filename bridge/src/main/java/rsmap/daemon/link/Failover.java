// A host's connection to whichever of its authorities is active: each tried in order until one accepts
// the login; a standby refuses it (ERROR unavailable, naming the active one) and the next is tried.
package rsmap.daemon.link;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import rsmap.daemon.config.Authorities;
import rsmap.daemon.config.Endpoint;
import rsmap.wire.Client;
import rsmap.wire.Code;
import rsmap.wire.Frame;

/**
 * docs/cluster.md, "Active and standby". The one that answered last is tried first, then the others in
 * the configured order: after a takeover every reconnect reaches the new active one without waiting for a
 * dead first one's connect timeout again. Each try is bounded by {@link #TIMEOUT}.
 */
public final class Failover implements AuthorityChannel.Connector {
    /** How long a host waits for its authority: to connect, and for each answer. */
    static final java.time.Duration TIMEOUT = java.time.Duration.ofSeconds(5);

    /** The longest wait between connects when standbys are named: a takeover is found within it. */
    static final long STANDBY_BACKOFF_MS = 500;
    private final Authorities authorities;
    private final Credentials credentials;

    /** A fresh credential source for each connect (HostAuth's, for this host). */
    public interface Credentials {
        Supplier<String> get() throws IOException;
    }
    private final int maxFrame;
    /** The index of the one that accepted last (guarded by this). */
    private int last;

    /** {@code maxFrame}: the cluster's max_frame (one rsmapd.conf for all), the largest frame sent. */
    public Failover(Authorities authorities, Credentials credentials, int maxFrame) {
        this.authorities = authorities;
        this.credentials = credentials;
        this.maxFrame = maxFrame;
    }

    @Override
    public AuthorityChannel open() throws IOException, Client.Refusal {
        List<Endpoint> order = new ArrayList<>(authorities.endpoints());
        int first;
        synchronized (this) {
            first = last;
        }
        order.add(0, order.remove(first));
        List<String> why = new ArrayList<>();
        Client.Refusal refusal = null;
        for (Endpoint e : order) {
            try {
                AuthorityChannel c = channel(e);
                synchronized (this) {
                    last = authorities.endpoints().indexOf(e);
                }
                return c;
            } catch (Client.Refusal r) {
                refusal = refusal == null || r.category().isPresent() && r.category().get()
                        != rsmap.wire.Category.UNAVAILABLE ? r : refusal;
                why.add(e + ": " + r.getMessage());
            } catch (IOException x) {
                why.add(e + ": " + (x.getMessage() == null ? x.getClass().getSimpleName() : x.getMessage()));
            }
        }
        String all = order.size() == 1 ? why.get(0).substring(why.get(0).indexOf(": ") + 2) : String.join("; ", why);
        if (refusal != null && order.size() == 1) {
            throw refusal;
        }
        if (refusal != null) {
            throw new Client.Refusal(all, refusal.category());
        }
        throw new IOException(all);
    }

    @Override
    public long maxBackoffMs() {
        return authorities.endpoints().size() > 1 ? STANDBY_BACKOFF_MS : AuthorityChannel.Connector.MAX_BACKOFF_MS;
    }

    private AuthorityChannel channel(Endpoint e) throws IOException, Client.Refusal {
        InetSocketAddress address = e.address();
        Client c = Client.connect(address.isUnresolved() ? new InetSocketAddress(address.getHostString(),
                address.getPort()) : address, credentials.get(), TIMEOUT).maxFrame(maxFrame);
        return new AuthorityChannel() {
            @Override
            public long send(Code code, String json) throws IOException {
                return c.send(code, json);
            }

            @Override
            public List<Frame> receive(long tid) throws IOException, Client.Refusal {
                return c.receive(tid);
            }

            @Override
            public String address() {
                return e.toString();
            }

            @Override
            public void close() {
                try {
                    c.close();
                } catch (IOException x) {
                    // closing anyway
                }
            }
        };
    }
}
