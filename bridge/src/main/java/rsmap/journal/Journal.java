// The daemon's journal: every record on disk (forced) before the answer goes out; replayed at start,
// torn tails cut off, compacted atomically.
package rsmap.journal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * An append-only file of records, one per line:
 *
 * <pre>
 * CRC32(8 hex) SP LENGTH(8 hex) SP RECORD LF
 * </pre>
 *
 * A record is on disk when {@link #append} returns (the channel is forced). A crash can leave only the
 * last line torn; {@link #open} keeps every whole line before it and cuts the rest, so a record is
 * either fully there or not at all - never half, never twice. {@link #compact} replaces the whole file
 * by a snapshot through a forced temporary file and an atomic rename (the Kubernetes DRA checkpoint
 * habit), so a crash leaves either the old or the new journal. Records must not contain a line feed.
 *
 * <p>Group commit (an authority grants a thousand a second): {@link #write} puts a record in the
 * file without forcing it, {@link #sync} forces everything written so far, once for all the threads that
 * wait for it. The file is written in order, so a forced record has every earlier one on disk too: a
 * caller answers only after its {@code sync}, and a crash loses only what was never answered.
 * {@link #forceSoon} starts the disk writing what was written so far and returns at once, so that the
 * caller's work after its write (a job's files) overlaps the disk's: on Linux the caller's own thread asks
 * the kernel for write-back of the file ({@link Writeback}, sync_file_range), elsewhere the journal's own
 * thread begins the force ({@link ForceAhead}). A force that failed fails every later {@code sync}.
 *
 * <p>The file is zero-filled {@value #AHEAD} bytes ahead of the records (forced once per chunk), so that
 * a record's force writes data into allocated space and changes no file size: no file-system journal
 * commit per record (the way databases keep their write-ahead logs). The zeros are no record: a crash
 * leaves them after the last record, where {@link #open} cuts them as a torn tail; {@link #close} cuts
 * them too, so a journal at rest ends with its last record.
 */
public final class Journal implements AutoCloseable {
    private final Path file;
    private FileChannel channel;
    private final List<String> replayed;
    /** Records written that an answer waits for, and of them forced (guarded by this). */
    private long written;
    private long forced;
    /** A record written that no answer waits for ({@link #writeLazily}) is not forced yet (guarded by this). */
    private boolean lazy;
    /** Zero-filled space ahead of the records. */
    static final int AHEAD = 1 << 20;
    /** The file's size: the records, then zeros up to here (guarded by this). */
    private long allocated;
    /** One force at a time; those who wait behind it find their record forced by it. */
    private final Object forcing = new Object();
    /**
     * The first force that failed: every later {@link #sync} fails with it. After a failed fsync the kernel
     * may have dropped the dirty pages and report the next fsync clean, so a failure is never retried.
     */
    private volatile IOException failed;
    /** The thread that forces ahead ({@link #forceSoon}) where the kernel's write-back cannot be asked for. */
    private final ForceAhead ahead = new ForceAhead(this);
    /** The kernel's write-back of the file, which {@link #forceSoon} starts; null where it cannot (guarded by this). */
    private Writeback writeback;
    /** {@link #forceSoon} may use {@link #writeback} (false: always the journal's thread). */
    private final boolean early;
    /** Where the next record goes: the records' end, kept here so that a write asks no lseek (guarded by this). */
    private long end;

    private Journal(Path file, FileChannel channel, List<String> replayed, boolean early) throws IOException {
        this.file = file;
        this.channel = channel;
        this.replayed = List.copyOf(replayed);
        this.end = channel.position();
        try {
            this.allocated = channel.size();
        } catch (IOException e) {
            this.allocated = 0; // the first write fills ahead from where it writes
        }
        this.early = early;
        this.writeback = early ? Writeback.open(file) : null;
    }

    /** Zero-fills the next {@value #AHEAD} bytes when a record of {@code bytes} would not fit before them. */
    private void room(int bytes) throws IOException {
        long at = end;
        if (at + bytes <= allocated) {
            return;
        }
        long from = Math.max(at, allocated);
        long size = Math.max(AHEAD, bytes);
        ByteBuffer zeros = ByteBuffer.allocate((int) size);
        for (long p = from; zeros.hasRemaining(); ) {
            p += channel.write(zeros, p);
        }
        channel.force(false); // the new size and blocks are on disk once, not with every record
        allocated = from + size;
    }

    /**
     * Puts one encoded record at the records' end (pwrite: no lseek per record). A write that fails
     * leaves the end where it was: the next record goes over what it left, and {@link #open} cuts a
     * partial line after the last whole one.
     */
    private void put(ByteBuffer b) throws IOException {
        room(b.remaining());
        long at = end;
        while (b.hasRemaining()) {
            at += channel.write(b, at);
        }
        end = at;
    }

    /** Opens (or creates) the journal, replaying its whole records and cutting a torn tail. */
    public static Journal open(Path file) throws IOException {
        return open(file, true);
    }

    /**
     * {@link #open}; {@code early} false: {@link #forceSoon} always hands the force to the journal's thread
     * (what a platform without sync_file_range does; for tests).
     */
    static Journal open(Path file, boolean early) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.deleteIfExists(tmp(file)); // a compaction that did not finish
        // Never through a link another user planted; readable by root (and the daemon user) only: it names
        // every job, user and request, which QUERY shows to their owners alone.
        FileChannel ch;
        try {
            ch = FileChannel.open(file, java.util.Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE, java.nio.file.LinkOption.NOFOLLOW_LINKS), OWNER_ONLY);
        } catch (IOException e) {
            throw new IOException(file + ": cannot open the journal" + (Files.isSymbolicLink(file)
                    ? ": it is a symbolic link, not followed" : ": " + e.getMessage()), e);
        }
        byte[] all;
        try {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            all = readAll(ch);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        List<String> records = new ArrayList<>();
        int good = 0;
        int p = 0;
        while (p < all.length) {
            int lf = indexOf(all, (byte) '\n', p);
            if (lf < 0) {
                break; // torn: no line end
            }
            String record = JournalLine.decode(all, p, lf);
            if (record == null) {
                if (indexOf(all, (byte) '\n', lf + 1) >= 0) {
                    // Whole records follow a damaged one: that is not a torn write but damage. Cutting it
                    // away would silently drop grants; refuse, naming where.
                    ch.close();
                    throw new IOException(file + ": record " + (records.size() + 1) + " (byte " + p + ") is damaged"
                            + " and more records follow it; rsmapd will not guess which grants are held");
                }
                break; // the last line, damaged: a torn write
            }
            records.add(record);
            p = lf + 1;
            good = p;
        }
        if (good < all.length) {
            ch.truncate(good);
            ch.force(true);
        }
        ch.position(good);
        try {
            return new Journal(file, ch, records, early);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** The records found when the journal was opened, in order. */
    public List<String> replayed() {
        return replayed;
    }

    /** Appends one record and forces it to disk before returning. */
    public synchronized void append(String record) throws IOException {
        write(record);
        channel.force(false);
        forced = written;
    }

    /** Writes one record without forcing it: on disk after the next {@link #sync} (or forced append). */
    public synchronized void write(String record) throws IOException {
        put(ByteBuffer.wrap(JournalLine.encode(record)));
        written++;
    }

    /**
     * Writes one record that no answer waits for: on disk with the next force (of any record, or at
     * close), and {@link #sync} does not force for it. For what can be learnt again after a crash.
     */
    public synchronized void writeLazily(String record) throws IOException {
        put(ByteBuffer.wrap(JournalLine.encode(record)));
        lazy = true;
    }

    /**
     * Starts the disk writing what was written so far, and returns at once: the caller goes on with work
     * that the record does not wait for (the job's files, its answer) while the disk writes, and its
     * {@link #sync} then waits only for the rest. On Linux the kernel is asked for the file's write-back
     * from the caller's thread (sync_file_range: no thread wakes); where it cannot be, or it refuses, the
     * journal's own thread begins the force. What is durable when is unchanged: nothing is answered before
     * its {@code sync} returns.
     */
    public void forceSoon() {
        synchronized (this) { // never on a descriptor that a compaction or close has just closed
            if (writeback != null && writeback.start()) {
                return;
            }
        }
        ahead.ask();
    }

    /** Forces every record written so far; returns at once when they are already. */
    public void sync() throws IOException {
        synchronized (this) {
            if (failed != null) {
                throw failed;
            }
            if (forced >= written) {
                return;
            }
        }
        synchronized (forcing) {
            long target;
            FileChannel ch;
            synchronized (this) {
                if (failed != null) {
                    throw failed;
                }
                if (forced >= written) {
                    return; // the force before ours took our record along
                }
                target = written;
                ch = channel;
            }
            try {
                ch.force(false);
            } catch (java.nio.channels.ClosedChannelException e) {
                synchronized (this) {
                    if (forced >= target) {
                        return; // closed meanwhile: close() forced what was written
                    }
                }
                failed = e;
                throw e;
            } catch (IOException e) {
                failed = e;
                throw e;
            }
            synchronized (this) {
                forced = Math.max(forced, target);
            }
        }
    }

    /** Replaces the journal by {@code snapshot}, atomically. */
    public synchronized void compact(List<String> snapshot) throws IOException {
        Path tmp = tmp(file);
        Files.deleteIfExists(tmp); // a link is removed, not followed
        try (FileChannel out = FileChannel.open(tmp, java.util.Set.of(StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE, java.nio.file.LinkOption.NOFOLLOW_LINKS), OWNER_ONLY)) {
            for (String r : snapshot) {
                ByteBuffer b = ByteBuffer.wrap(JournalLine.encode(r));
                while (b.hasRemaining()) {
                    out.write(b);
                }
            }
            out.force(true);
        }
        channel.close();
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("the state directory must allow an atomic rename: " + e.getMessage(), e);
        }
        forceDirectory(file.toAbsolutePath().getParent());
        channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                java.nio.file.LinkOption.NOFOLLOW_LINKS);
        channel.position(channel.size());
        allocated = channel.size();
        end = allocated;
        if (writeback != null) {
            writeback.close(); // it names the file that the rename replaced
        }
        writeback = early ? Writeback.open(file) : null;
        forced = written; // the snapshot holds everything written before it, forced
    }

    @Override
    public synchronized void close() throws IOException {
        ahead.stop();
        if (writeback != null) {
            writeback.close();
            writeback = null;
        }
        try {
            if (channel.isOpen() && allocated > end) {
                channel.truncate(end); // at rest the journal ends with its last record
                channel.force(false);
            } else if ((forced < written || lazy) && channel.isOpen()) {
                channel.force(false); // a command written but not yet synced is on disk when the daemon stops
            }
            forced = written;
        } finally {
            channel.close();
        }
    }

    private static int indexOf(byte[] b, byte x, int from) {
        for (int i = from; i < b.length; i++) {
            if (b[i] == x) {
                return i;
            }
        }
        return -1;
    }

    private static final java.nio.file.attribute.FileAttribute<?> OWNER_ONLY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

    private static byte[] readAll(FileChannel ch) throws IOException {
        long size = ch.size();
        if (size > Integer.MAX_VALUE - 8) {
            throw new IOException("the journal is larger than 2 GiB");
        }
        ByteBuffer b = ByteBuffer.allocate((int) size);
        while (b.hasRemaining() && ch.read(b, b.position()) >= 0) {
            // read on: a channel may return fewer bytes
        }
        return b.array();
    }

    private static Path tmp(Path file) {
        return file.resolveSibling(file.getFileName() + ".tmp");
    }

    private static void forceDirectory(Path dir) throws IOException {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            // some file systems cannot sync a directory; the rename itself is atomic
        }
    }
}
