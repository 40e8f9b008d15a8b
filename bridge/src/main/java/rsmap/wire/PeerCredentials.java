// Who is on the other end of a Unix socket, from the kernel: user and group names from the JDK, and the
// numeric uid, gid and pid from getsockopt(SO_PEERCRED) through JNA.
package rsmap.wire;

import com.sun.jna.Native;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.channels.SocketChannel;
import java.util.Optional;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * Java 17's {@code ExtendedSocketOptions.SO_PEERCRED} gives the peer's user and group only. The pid (the
 * process a starter asks rsmapd to put under its job's device policy) comes from getsockopt on the
 * channel's file descriptor, which the JDK exposes only through {@code sun.nio.ch.SelChImpl#getFDVal};
 * the JVM must run with {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED} (bin/rsmapd and the unit
 * do). Without it, or without JNA, the pid is 0: unknown, and what needs it is refused.
 */
public final class PeerCredentials {
    private static final int SOL_SOCKET = 1;
    private static final int SO_PEERCRED = 17;

    /** getsockopt, directly mapped (JNA's interface proxies cost several microseconds a call). */
    private static final class LibC {
        static native int getsockopt(int fd, int level, int name, int[] value, int[] length);
    }

    private static final boolean LIBC;
    private static final Method FD_VAL;
    /** Why the pid is unknown, or "" when it can be read. */
    public static final String UNAVAILABLE;

    static {
        boolean libc = false;
        Method fdVal = null;
        String why = "";
        try {
            if (!Object.class.getModule().isExported("sun.nio.ch", PeerCredentials.class.getModule())) {
                throw new IllegalStateException("java.base does not export sun.nio.ch to rsmap");
            }
            fdVal = Class.forName("sun.nio.ch.SelChImpl").getMethod("getFDVal");
            Native.register(LibC.class, "c");
            libc = true;
        } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
            why = "the peer's pid cannot be read (" + e.getClass().getSimpleName() + ": " + e.getMessage()
                    + "); run the JVM with --add-exports java.base/sun.nio.ch=ALL-UNNAMED";
            libc = false;
            fdVal = null;
        }
        LIBC = libc;
        FD_VAL = fdVal;
        UNAVAILABLE = why;
    }

    private PeerCredentials() {
    }

    /** uid and gid to the names the JDK found for them lately: a job start should not read /etc/passwd. */
    private record Names(String user, String group, long at) {
    }

    private static final java.util.concurrent.ConcurrentHashMap<Long, Names> NAMES =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** How long a uid's name is trusted (a renamed account is seen within this). */
    private static final long NAMES_TTL_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(60);

    /** The peer of {@code client}; {@link Session.Peer#UNKNOWN} where the platform does not say. */
    public static Session.Peer of(SocketChannel client) {
        int[] cred = numeric(client);
        long now = System.nanoTime();
        if (cred != null) {
            Names n = NAMES.get(((long) cred[1] << 32) | (cred[2] & 0xffffffffL));
            if (n != null && now - n.at() < NAMES_TTL_NANOS) {
                return new Session.Peer(n.user(), n.group(), cred[1], cred[2], cred[0]);
            }
        }
        String user;
        String group;
        try {
            UnixDomainPrincipal p = client.getOption(ExtendedSocketOptions.SO_PEERCRED);
            user = p.user().getName();
            group = p.group().getName();
        } catch (IOException | UnsupportedOperationException e) {
            return Session.Peer.UNKNOWN;
        }
        if (cred == null) {
            return new Session.Peer(user, group, -1, -1, 0);
        }
        NAMES.put(((long) cred[1] << 32) | (cred[2] & 0xffffffffL), new Names(user, group, now));
        return new Session.Peer(user, group, cred[1], cred[2], cred[0]);
    }

    /** The kernel's word on the process at the other end of a Unix socket. */
    public record Ids(int pid, int uid, int gid) {
    }

    /**
     * Who serves a client's connected {@code channel} (the hooks' and the CLI's check of rsmapd, see
     * {@link TrustedServer}); empty where the platform does not say ({@link #UNAVAILABLE}).
     */
    public static Optional<Ids> ofServer(SocketChannel channel) {
        int[] cred = numeric(channel);
        return cred == null ? Optional.empty() : Optional.of(new Ids(cred[0], cred[1], cred[2]));
    }

    /** struct ucred {pid, uid, gid}, or null. */
    private static int[] numeric(SocketChannel client) {
        if (!LIBC) {
            return null;
        }
        try {
            int fd = (Integer) FD_VAL.invoke(client);
            int[] cred = new int[3];
            int[] len = {12};
            return LibC.getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, len) == 0 && len[0] == 12 ? cred : null;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }
}
