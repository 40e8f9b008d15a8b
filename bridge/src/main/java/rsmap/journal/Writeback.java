// Starts the kernel writing a journal's new records to the disk without waiting for it (Linux
// sync_file_range), so that the force before an answer waits only for the rest.
package rsmap.journal;

import com.sun.jna.Native;
import com.sun.jna.Platform;
import java.nio.file.Path;

/**
 * A second descriptor of the journal's file (JNA, direct mapping), used only for {@code
 * sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE)}: the file's dirty pages go to the disk's queue at once
 * and the caller goes on in its own thread, with no hand-off to another. Durability is unchanged: an answer
 * still waits for {@link Journal#sync} (fdatasync on the journal's own descriptor), which then waits for
 * that write and the disk's cache flush. A write-back error is kept by the file and reported by that
 * fdatasync: {@code SYNC_FILE_RANGE_WRITE} alone neither waits nor consumes it. Where the call is missing
 * (not Linux, no JNA) {@link #open} gives null and the journal forces ahead on its own thread.
 */
final class Writeback implements AutoCloseable {
    private static final int O_WRONLY = 1;
    private static final int O_NOFOLLOW = 0x20000;
    private static final int O_CLOEXEC = 0x80000;
    private static final int SYNC_FILE_RANGE_WRITE = 2;
    private static final boolean LINKED;

    static {
        boolean ok = false;
        if (Platform.isLinux()) {
            try {
                Native.register(Writeback.class, "c");
                ok = true;
            } catch (LinkageError | RuntimeException e) {
                ok = false; // forced ahead on the journal's thread instead
            }
        }
        LINKED = ok;
    }

    private static native int open(String path, int flags);

    private static native int close(int fd);

    private static native int sync_file_range(int fd, long offset, long nbytes, int flags);

    private final int fd;

    private Writeback(int fd) {
        this.fd = fd;
    }

    /** The file's own writeback, or null where sync_file_range cannot be used. */
    static Writeback open(Path file) {
        if (!LINKED) {
            return null;
        }
        int fd = open(file.toAbsolutePath().toString(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? null : new Writeback(fd);
    }

    /** Starts writing every dirty page of the file; false when the kernel refused (the caller forces ahead). */
    boolean start() {
        return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0;
    }

    @Override
    public void close() {
        close(fd);
    }
}
