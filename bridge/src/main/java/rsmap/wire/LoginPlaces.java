// The places for TCP connections awaiting login, counted per source address as well as in all: one peer
// flooding the authority's port from one address cannot take the places other hosts log in through.
package rsmap.wire;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link ServerLimits#maxUnauthenticated} places in all (1,024 by default), of which one source address
 * holds at most {@link #perSource}: a sixteenth of them (64 by default), but at least 16 (or all, when
 * there are fewer), so that a site behind one address still logs in a few hosts at once. A connection holds its place from its
 * accept until its login ends or its login timeout closes it. Hosts logged in hold none, so they are
 * served whatever the flood; a host logging in from another address finds a place. Thread-safe: the
 * acceptor counts up, the worker that ends the login or the selector that closes the connection down.
 */
final class LoginPlaces {
    private final int total;
    private final int perSource;
    private final AtomicInteger held = new AtomicInteger();
    private final Map<InetAddress, Integer> bySource = new ConcurrentHashMap<>();

    LoginPlaces(int total) {
        this.total = total;
        this.perSource = Math.max(Math.min(total, 16), total / 16);
    }

    /** The source address of a TCP connection (null when it is already closed: then it counts in all only). */
    static InetAddress sourceOf(SocketChannel ch) {
        try {
            return ch.getRemoteAddress() instanceof InetSocketAddress a ? a.getAddress() : null;
        } catch (java.io.IOException e) {
            return null;
        }
    }

    /** Takes a place for a connection from {@code source}; null when taken, else why not (nothing taken). */
    String take(InetAddress source) {
        if (held.incrementAndGet() > total) {
            held.decrementAndGet();
            return "too many connections have not logged in yet: the limit is " + total + "; try again later";
        }
        if (source != null) {
            boolean[] over = {false};
            bySource.compute(source, (s, n) -> {
                int now = n == null ? 0 : n;
                if (now >= perSource) {
                    over[0] = true;
                    return n;
                }
                return now + 1;
            });
            if (over[0]) {
                held.decrementAndGet();
                return "too many connections from " + source.getHostAddress() + " have not logged in yet: the limit is "
                        + perSource + " per address; try again later";
            }
        }
        return null;
    }

    /** Gives back the place of a connection from {@code source}. */
    void give(InetAddress source) {
        held.decrementAndGet();
        if (source != null) {
            bySource.computeIfPresent(source, (s, n) -> n <= 1 ? null : n - 1);
        }
    }

    int perSource() {
        return perSource;
    }
}
