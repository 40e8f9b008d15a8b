// A TCP endpoint as rsmapd.conf writes it: HOST:PORT, [IPv6]:PORT (listen, authority).
package rsmap.daemon.config;

import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One parse, one canonical form: {@code node00:7321}, {@code [::1]:7321}. */
public record Endpoint(String host, int port) {
    private static final Pattern FORM = Pattern.compile("(?:\\[([0-9A-Fa-f:.]+)\\]|([A-Za-z0-9_][A-Za-z0-9_.-]{0,252})):([0-9]{1,5})");

    public Endpoint {
        Objects.requireNonNull(host);
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("port " + port + " is not 1 to 65535");
        }
    }

    /** HOST:PORT, or [IPv6]:PORT; empty when {@code text} is neither, with why in the exception. */
    static Endpoint parse(String text) {
        Matcher m = FORM.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + ConfigText.printable(text) + "' is not HOST:PORT (or [IPv6]:PORT)");
        }
        int port = Integer.parseInt(m.group(3));
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("port " + port + " of '" + text + "' is not 1 to 65535");
        }
        return new Endpoint(m.group(1) != null ? m.group(1) : m.group(2), port);
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(host, port);
    }

    @Override
    public String toString() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
