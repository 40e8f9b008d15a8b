// One lease as the lock file holds it: epoch, renewal count, holder, since; four checksummed slots, two for
// the even epochs and two for the odd ones, so that a write torn by a crash leaves the one before it
// readable and a former holder's late renewal never lands where its successor writes.
package rsmap.daemon.authority;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;
import rsmap.Hex;

/**
 * A slot is {@value #SLOT} bytes from offset {@value #SLOT} times its index (0 to 3), one line padded with spaces:
 * <pre>
 * rsmap-lease 1 epoch=3 seq=41 holder=node00:7321 pid=4711 since=2026-12-03T12:00:00Z crc=1a2b3c4d
 * </pre>
 * {@code epoch} grows by one with every takeover, {@code seq} with every renewal of one epoch;
 * {@code crc} is the CRC-32 of the line before " crc=". The lease is the valid slot with the highest
 * (epoch, seq), wherever it is; a file with no valid slot (new, or a lock file of a release before leases)
 * holds none. A lease of an even epoch is written into slot 0 or 1, of an odd one into 2 or 3: into the one
 * of the two that does not hold the newer record. A takeover (epoch + 1) and a renewal of the epoch before
 * it that crosses it therefore write different slots, and neither overwrites the other.
 */
record LeaseRecord(long epoch, long seq, String holder, long pid, Instant since) {
    static final int SLOT = 256;
    static final int SLOTS = 4;
    private static final Pattern FORM = Pattern.compile("rsmap-lease 1 epoch=([0-9]{1,18}) seq=([0-9]{1,18}) "
            + "holder=(\\S{1,80}) pid=([0-9]{1,10}) since=(\\S{1,40})");

    LeaseRecord {
        if (epoch < 1 || seq < 0 || !holder.matches("\\S{1,80}")) {
            throw new IllegalArgumentException("a lease has an epoch of at least 1 and a holder without spaces");
        }
    }

    /** The first lease of {@code epoch}, held by {@code holder} (this process) from now. */
    static LeaseRecord first(long epoch, String holder) {
        return new LeaseRecord(epoch, 0, holder, ProcessHandle.current().pid(), Instant.now().with(
                java.time.temporal.ChronoField.NANO_OF_SECOND, 0));
    }

    /** The same lease, renewed once more. */
    LeaseRecord renewed() {
        return new LeaseRecord(epoch, seq + 1, holder, pid, since);
    }

    /** The slot's line without its padding. */
    @Override
    public String toString() {
        String body = "rsmap-lease 1 epoch=" + epoch + " seq=" + seq + " holder=" + holder + " pid=" + pid + " since="
                + since;
        CRC32 crc = new CRC32();
        crc.update(body.getBytes(StandardCharsets.US_ASCII));
        return body + " crc=" + Hex.of(crc.getValue(), 8);
    }

    /** The lease of one slot's text; empty when it is not a whole, intact one. */
    static Optional<LeaseRecord> parse(String slot) {
        String line = slot.strip();
        int at = line.lastIndexOf(" crc=");
        if (at < 0) {
            return Optional.empty();
        }
        Matcher m = FORM.matcher(line.substring(0, at));
        if (!m.matches()) {
            return Optional.empty();
        }
        CRC32 crc = new CRC32();
        crc.update(line.substring(0, at).getBytes(StandardCharsets.US_ASCII));
        if (!line.substring(at + 5).equals(Hex.of(crc.getValue(), 8))) {
            return Optional.empty();
        }
        try {
            return Optional.of(new LeaseRecord(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), m.group(3),
                    Long.parseLong(m.group(4)), Instant.parse(m.group(5))));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The lease {@code channel} holds: the valid slot with the highest (epoch, seq). */
    static Optional<LeaseRecord> read(FileChannel channel) throws IOException {
        return newest(slots(channel), r -> true);
    }

    /** The newest record of {@code epoch} that {@code channel} holds, whether or not a newer epoch follows it. */
    static Optional<LeaseRecord> read(FileChannel channel, long epoch) throws IOException {
        return newest(slots(channel), r -> r.epoch == epoch);
    }

    private static Optional<LeaseRecord> newest(List<Optional<LeaseRecord>> slots, Predicate<LeaseRecord> which) {
        Optional<LeaseRecord> best = Optional.empty();
        for (Optional<LeaseRecord> r : slots) {
            if (r.isPresent() && which.test(r.get()) && (best.isEmpty() || newer(r.get(), best.get()))) {
                best = r;
            }
        }
        return best;
    }

    /** The four slots as they read. */
    private static List<Optional<LeaseRecord>> slots(FileChannel channel) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(SLOTS * SLOT);
        while (b.hasRemaining() && channel.read(b, b.position()) > 0) {
            // read on: a channel may return fewer bytes
        }
        String all = new String(b.array(), 0, b.position(), StandardCharsets.ISO_8859_1);
        List<Optional<LeaseRecord>> slots = new ArrayList<>(SLOTS);
        for (int i = 0; i < SLOTS; i++) {
            slots.add(all.length() > i * SLOT
                    ? parse(all.substring(i * SLOT, Math.min(all.length(), (i + 1) * SLOT))) : Optional.empty());
        }
        return slots;
    }

    private static boolean newer(LeaseRecord a, LeaseRecord b) {
        return a.epoch > b.epoch || a.epoch == b.epoch && a.seq > b.seq;
    }

    /** Writes this lease into its epoch's slot that does not hold the newer of the two (not forced). */
    void write(FileChannel channel) throws IOException {
        List<Optional<LeaseRecord>> slots = slots(channel);
        int base = (int) (epoch % 2) * 2;
        Optional<LeaseRecord> first = slots.get(base);
        Optional<LeaseRecord> second = slots.get(base + 1);
        int slot = base + (first.isPresent() && (second.isEmpty() || newer(first.get(), second.get())) ? 1 : 0);
        byte[] line = new byte[SLOT];
        java.util.Arrays.fill(line, (byte) ' ');
        byte[] text = toString().getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(text, 0, line, 0, text.length);
        line[SLOT - 1] = '\n';
        ByteBuffer out = ByteBuffer.wrap(line);
        long at = (long) slot * SLOT;
        while (out.hasRemaining()) {
            at += channel.write(out, at);
        }
    }
}
