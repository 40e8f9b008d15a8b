// sd_notify(3) for rsmapd: tells the service manager READY=1 once the socket serves, STOPPING=1 on the way out.
package rsmap.daemon.job;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/**
 * The notification protocol of systemd (sd_notify(3), "NOTIFY_SOCKET"): one datagram of
 * newline-separated {@code NAME=value} lines sent to the AF_UNIX socket named by {@code $NOTIFY_SOCKET},
 * a file system path ({@code /run/systemd/notify}) or, when it starts with {@code @}, a name in the
 * abstract namespace. JDK 17 has no Unix datagram channel, so the three system calls go through JNA; the
 * native library is loaded only when a NOTIFY_SOCKET is set. Linux only (the constants below).
 */
public final class Notify {
    /** Fits {@code struct sockaddr_un}: a 2-byte family, then 108 bytes of path (unix(7)). */
    static final int SUN_PATH = 108;
    private static final int AF_UNIX = 1;
    private static final int SOCK_DGRAM = 2;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final int MSG_NOSIGNAL = 0x4000;

    private final String address;
    private final byte[] sockaddr;

    /** {@code address} as NOTIFY_SOCKET holds it; anything but a path or an {@code @}name is refused. */
    Notify(String address) {
        this.address = address;
        this.sockaddr = sockaddr(address);
    }

    /** The notifier NOTIFY_SOCKET names in {@code env}; empty when it is unset or empty (no supervisor). */
    public static Optional<Notify> fromEnvironment(Map<String, String> env) {
        String a = env.getOrDefault("NOTIFY_SOCKET", "");
        return a.isEmpty() ? Optional.empty() : Optional.of(new Notify(a));
    }

    String address() {
        return address;
    }

    /** Sends {@code state} (e.g. {@code READY=1}) as one datagram; a supervisor that is gone is an error. */
    public void send(String state) throws IOException {
        byte[] message = state.getBytes(StandardCharsets.UTF_8);
        LibC c;
        try {
            c = LibC.INSTANCE;
        } catch (LinkageError e) {
            // JNA unpacks its native part into a temporary folder: a noexec /tmp lands here (-Djna.tmpdir).
            throw new IOException("NOTIFY_SOCKET " + address + ": JNA cannot load libc: " + e, e);
        }
        int fd;
        try {
            fd = c.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        } catch (LastErrorException e) {
            throw new IOException("NOTIFY_SOCKET " + address + ": socket: " + e.getMessage(), e);
        }
        try {
            c.sendto(fd, message, new NativeLong(message.length), MSG_NOSIGNAL, sockaddr, sockaddr.length);
        } catch (LastErrorException e) {
            throw new IOException("NOTIFY_SOCKET " + address + ": " + e.getMessage(), e);
        } finally {
            c.close(fd);
        }
    }

    /**
     * {@code struct sockaddr_un} for {@code address}, exactly as long as the address length to pass with
     * it: for a path the family, the path and its NUL; for {@code @name} the family, a NUL in place of the
     * {@code @} and the name without a NUL (the abstract name is every byte the length covers), as
     * sd_notify builds it.
     */
    public static byte[] sockaddr(String address) {
        boolean path = address.startsWith("/");
        if (!path && !address.startsWith("@")) {
            throw new IllegalArgumentException("NOTIFY_SOCKET is an absolute path or an @abstract name, not '"
                    + address + "'");
        }
        byte[] name = address.getBytes(StandardCharsets.UTF_8);
        if (address.length() < 2) {
            throw new IllegalArgumentException("NOTIFY_SOCKET '" + address + "' names no socket");
        }
        int pathBytes = path ? name.length + 1 : name.length;
        if (pathBytes > SUN_PATH) {
            throw new IllegalArgumentException("NOTIFY_SOCKET is longer than " + SUN_PATH + " bytes: '" + address + "'");
        }
        if (address.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("NOTIFY_SOCKET contains a NUL");
        }
        ByteBuffer b = ByteBuffer.allocate(2 + pathBytes).order(ByteOrder.nativeOrder());
        b.putShort((short) AF_UNIX);
        b.put(name);
        byte[] out = b.array(); // a path's NUL is the last byte, already 0
        if (!path) {
            out[2] = 0;
        }
        return out;
    }

    /** The libc calls sending one datagram (socket(2), sendto(2), close(2)). */
    private interface LibC extends Library {
        LibC INSTANCE = Native.load("c", LibC.class);

        int socket(int domain, int type, int protocol) throws LastErrorException;

        NativeLong sendto(int fd, byte[] buf, NativeLong len, int flags, byte[] addr, int addrlen)
                throws LastErrorException;

        int close(int fd);
    }
}
