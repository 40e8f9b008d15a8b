// The lease's file and its byte locks (docs/cluster.md, "Active and standby"): where each lock lives, one
// channel per file in this JVM, and the lease record read and forced through it. Lease holds the protocol.
package rsmap.daemon.authority;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.Set;
import rsmap.daemon.records.StateLock;

/**
 * The file {@code state_dir/lock} holds the lease ({@link LeaseRecord}) in four slots, and POSIX (fcntl)
 * byte locks, which NFSv4 carries to its server (locks past the end of the file are allowed):
 * <ul>
 *   <li>byte 0, the <b>takeover</b> lock: a standby holds it while it reads the lease and, when it takes
 *   over, writes the next epoch, so that two standbys never both take it. The active never takes it;</li>
 *   <li>byte 1024 + 2 &times; epoch, the epoch's <b>life</b> lock: held by that epoch's holder for its life.
 *   The kernel (or the NFS server, after its own lease time) frees it when the holder dies: a standby that
 *   finds it free takes over at once;</li>
 *   <li>byte 1025 + 2 &times; epoch, the epoch's <b>renewal</b> lock: held by its holder for the read and
 *   write of one renewal;</li>
 *   <li>byte 1, held by the active when it can, as every rsmapd before leases held its lock file: with no
 *   lease written, a takeover waits for it.</li>
 * </ul>
 * A lock taken here is released by its {@link FileLock}, or by {@link #close} with every other: a POSIX lock
 * belongs to the process and the file, so this JVM keeps one channel per lease file.
 */
final class LeaseFile implements Closeable {
    /** Byte 0: the standbys' takeover lock. */
    static final long TAKEOVER = 0;
    /** Byte 1: held by the active when it can, and by every rsmapd that keeps no lease. */
    static final long ANY_LIFE = 1;
    private final Path path;
    private final Path key;
    private final FileChannel channel;

    private LeaseFile(Path path, Path key, FileChannel channel) {
        this.path = path;
        this.key = key;
        this.channel = channel;
    }

    /** Opens (or creates) {@code stateDir/lock}; one per state directory and process. */
    static LeaseFile open(Path stateDir) throws IOException {
        Files.createDirectories(stateDir);
        Path file = stateDir.resolve("lock");
        Path key = file.toAbsolutePath().normalize();
        if (!StateLock.claim(key)) { // a second channel on it, closed, would drop the first's locks
            throw new IOException("state_dir " + stateDir + " is in use by another rsmapd in this process; one daemon"
                    + " per state directory and process");
        }
        try {
            FileChannel ch = FileChannel.open(file, Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS));
            return new LeaseFile(file, key, ch);
        } catch (IOException e) {
            StateLock.unclaim(key);
            throw new IOException(file + ": cannot open the lease" + (Files.isSymbolicLink(file)
                    ? ": it is a symbolic link, not followed" : ": " + e.getMessage()), e);
        }
    }

    /** Byte {@code 1024 + 2 epoch}: held by the holder of {@code epoch} for its life. */
    static long lifeByte(long epoch) {
        return 1024 + 2 * epoch;
    }

    /** Byte {@code 1025 + 2 epoch}: held by the holder of {@code epoch} for one renewal's read and write. */
    static long renewalByte(long epoch) {
        return lifeByte(epoch) + 1;
    }

    /** {@code state_dir/lock}. */
    Path path() {
        return path;
    }

    /** The byte lock at {@code at} when free now; null when another process holds it. Never waits. */
    FileLock tryLock(long at) throws IOException {
        return channel.tryLock(at, 1, false);
    }

    /** The newest lease in the file; empty when none was written or none reads. */
    Optional<LeaseRecord> read() throws IOException {
        return LeaseRecord.read(channel);
    }

    /** The lease of {@code epoch} as its slot holds it. */
    Optional<LeaseRecord> read(long epoch) throws IOException {
        return LeaseRecord.read(channel, epoch);
    }

    /** {@code lease} into its slot, forced to the disk before this returns. */
    void write(LeaseRecord lease) throws IOException {
        lease.write(channel);
        channel.force(false);
    }

    /** Closes the channel, which releases every lock this process holds on the file. */
    @Override
    public void close() throws IOException {
        try {
            channel.close();
        } finally {
            StateLock.unclaim(key);
        }
    }
}
