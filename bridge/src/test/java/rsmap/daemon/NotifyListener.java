// Test and benchmark support: the service manager's end of sd_notify, a bound AF_UNIX datagram socket.
package rsmap.daemon;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import rsmap.daemon.job.Notify;

/**
 * Binds {@code /path} or {@code @name} (the NOTIFY_SOCKET forms, encoded by {@link Notify#sockaddr}) and
 * receives one datagram at a time. A wait is bounded by poll(2) so a silent daemon fails a test instead of
 * hanging it.
 */
public final class NotifyListener implements AutoCloseable {
    private static final int AF_UNIX = 1;
    private static final int SOCK_DGRAM = 2;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final short POLLIN = 1;

    private final String address;
    private final int fd;

    private NotifyListener(String address, int fd) {
        this.address = address;
        this.fd = fd;
    }

    /** A listener on {@code address} (a stale socket file at a path is replaced). */
    public static NotifyListener bind(String address) throws IOException {
        byte[] sockaddr = Notify.sockaddr(address);
        if (address.startsWith("/")) {
            Files.deleteIfExists(Path.of(address));
        }
        int fd = LibC.INSTANCE.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        try {
            LibC.INSTANCE.bind(fd, sockaddr, sockaddr.length);
        } catch (LastErrorException e) {
            LibC.INSTANCE.close(fd);
            throw new IOException("bind " + address + ": " + e.getMessage(), e);
        }
        return new NotifyListener(address, fd);
    }

    /** The value to put in NOTIFY_SOCKET. */
    public String address() {
        return address;
    }

    /** The next datagram as UTF-8 text, or empty if none came within {@code wait}. */
    public Optional<String> receive(Duration wait) {
        ByteBuffer pollfd = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putInt(fd).putShort(POLLIN);
        byte[] p = pollfd.array();
        try {
            if (LibC.INSTANCE.poll(p, new NativeLong(1), (int) Math.min(wait.toMillis(), Integer.MAX_VALUE)) == 0) {
                return Optional.empty();
            }
            byte[] buf = new byte[4096];
            int n = LibC.INSTANCE.recv(fd, buf, new NativeLong(buf.length), 0).intValue();
            return Optional.of(new String(buf, 0, n, StandardCharsets.UTF_8));
        } catch (LastErrorException e) {
            throw new UncheckedIOException(new IOException("receive on " + address + ": " + e.getMessage(), e));
        }
    }

    @Override
    public void close() throws IOException {
        LibC.INSTANCE.close(fd);
        if (address.startsWith("/")) {
            Files.deleteIfExists(Path.of(address));
        }
    }

    private interface LibC extends Library {
        LibC INSTANCE = Native.load("c", LibC.class);

        int socket(int domain, int type, int protocol) throws LastErrorException;

        int bind(int fd, byte[] addr, int addrlen) throws LastErrorException;

        int poll(byte[] fds, NativeLong nfds, int timeoutMillis) throws LastErrorException;

        NativeLong recv(int fd, byte[] buf, NativeLong len, int flags) throws LastErrorException;

        int close(int fd);
    }
}
