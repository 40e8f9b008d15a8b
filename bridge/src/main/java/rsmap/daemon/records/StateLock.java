// One rsmapd per state directory: an exclusive lock on state_dir/lock, held for the daemon's life.
package rsmap.daemon.records;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * a second daemon started on the same configuration used to take over the socket,
 * and stopping the first deleted the socket the second served. The lock (fcntl, released by the kernel
 * when the process dies, so a SIGKILL leaves no stale lock) is taken before the journal is opened or the
 * socket bound; the file holds the owner's pid, so the refusal can name it.
 */
public final class StateLock implements java.io.Closeable {
    /**
     * The lock files this JVM holds (several daemons in one process: tests, the demo), a host's and an
     * authority's lease file alike: both are {@code state_dir/lock}.
     */
    private static final java.util.Set<Path> HELD = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final FileChannel channel;
    private final FileLock lock;
    private final Path key;

    private StateLock(FileChannel channel, FileLock lock, Path key) {
        this.channel = channel;
        this.lock = lock;
        this.key = key;
    }

    public static StateLock acquire(Path stateDir) throws IOException {
        Files.createDirectories(stateDir);
        Path file = stateDir.resolve("lock");
        // fcntl locks belong to the process: a second channel on the file in this JVM must not even be
        // opened and closed, since closing it would drop the first daemon's lock.
        Path key = file.toAbsolutePath().normalize();
        if (!HELD.add(key)) {
            throw inUse(stateDir, ProcessHandle.current().pid() + "");
        }
        try {
            return lock(stateDir, file, key);
        } catch (IOException | RuntimeException e) {
            HELD.remove(key);
            throw e;
        }
    }

    /**
     * Claims the lock file {@code key} (absolute, normalized) for the one channel this JVM may have on it:
     * false when another daemon of this process holds it. {@link #unclaim} once that channel is closed.
     */
    public static boolean claim(Path key) {
        return HELD.add(key);
    }

    public static void unclaim(Path key) {
        HELD.remove(key);
    }

    private static IOException inUse(Path stateDir, String pid) {
        return new IOException("state_dir " + stateDir + " is in use by another rsmapd"
                + (pid.matches("[0-9]{1,10}") ? " (pid " + pid + ")" : "") + "; one daemon per state directory");
    }

    private static StateLock lock(Path stateDir, Path file, Path key) throws IOException {
        // O_NOFOLLOW: a link planted in place of the lock is refused, never written through
        FileChannel ch;
        try {
            ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE,
                    java.nio.file.LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw new IOException(file + ": cannot open the lock" + (Files.isSymbolicLink(file)
                    ? ": it is a symbolic link, not followed" : ": " + e.getMessage()), e);
        }
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (IOException e) {
            ch.close();
            throw new IOException(file + ": cannot lock: " + e.getMessage(), e);
        }
        if (lock == null) {
            String pid;
            try {
                ByteBuffer b = ByteBuffer.allocate(32);
                ch.read(b, 0);
                pid = new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII).strip();
            } catch (IOException e) {
                pid = "";
            } finally {
                ch.close();
            }
            throw inUse(stateDir, pid);
        }
        ch.truncate(0);
        ch.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
        return new StateLock(ch, lock, key);
    }

    @Override
    public synchronized void close() throws IOException {
        if (!channel.isOpen()) {
            return;
        }
        try {
            lock.release();
        } finally {
            channel.close();
            HELD.remove(key);
        }
    }
}
