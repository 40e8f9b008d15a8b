// docs/cluster.md, "The lease": its record and slots, a takeover only from a holder that died or stopped
// renewing for the timeout, never from an rsmapd that keeps no lease, and the holder stopped by a newer epoch.
package rsmap.daemon.authority;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.wire.Polls;

class LeaseTest {
    @TempDir
    Path tmp;
    final List<String> stops = new ArrayList<>();

    private Lease open(Duration timeout) throws Exception {
        return Lease.open(tmp, "node00:7321", timeout, stops::add);
    }

    @Test
    void record_printsAndParsesBack_aDamagedSlotReadsAsNone() {
        LeaseRecord r = new LeaseRecord(3, 41, "node00:7321", 4711, Instant.parse("2026-12-03T12:00:00Z"));
        assertThat(r.toString()).startsWith("rsmap-lease 1 epoch=3 seq=41 holder=node00:7321 pid=4711 "
                + "since=2026-12-03T12:00:00Z crc=");
        assertThat(LeaseRecord.parse(r + "   \n")).contains(r);
        String[] damaged = {"", "4711\n", r.toString().replace("seq=41", "seq=42"), r.toString().replace("crc=", "crc=0"),
            r.toString().substring(0, 60)};
        for (String d : damaged) {
            assertThat(LeaseRecord.parse(d)).as(d).isEmpty();
        }
    }

    /** A takeover (epoch 3) and the former's renewals that read before it (epoch 2) never write the same slot. */
    @Test
    void aRenewalCrossingATakeover_writesAnotherSlot_theNewEpochStillReads_andEachEpochKeepsItsNewest() throws Exception {
        Instant since = Instant.parse("2026-12-03T12:00:00Z");
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(tmp.resolve("lock"),
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.READ,
                java.nio.file.StandardOpenOption.WRITE)) {
            new LeaseRecord(2, 7, "node00:7321", 1, since).write(ch);
            new LeaseRecord(3, 0, "node01:7321", 2, since).write(ch);
            for (int seq = 8; seq < 12; seq++) {
                new LeaseRecord(2, seq, "node00:7321", 1, since).write(ch);
                assertThat(LeaseRecord.read(ch).orElseThrow().epoch()).isEqualTo(3);
                assertThat(LeaseRecord.read(ch, 2).orElseThrow().seq()).isEqualTo(seq);
            }
            new LeaseRecord(3, 1, "node01:7321", 2, since).write(ch);
            assertThat(LeaseRecord.read(ch)).contains(new LeaseRecord(3, 1, "node01:7321", 2, since));
            assertThat(LeaseRecord.read(ch, 3).orElseThrow().seq()).isEqualTo(1);
            assertThat(ch.size()).isEqualTo(LeaseRecord.SLOTS * LeaseRecord.SLOT);
        }
    }

    /** Writes {@code r} into slot {@code slot} of the lock file, as another authority would. */
    private void plant(LeaseRecord r, int slot) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(tmp.resolve("lock").toFile(), "rw")) {
            byte[] line = new byte[LeaseRecord.SLOT];
            java.util.Arrays.fill(line, (byte) ' ');
            byte[] text = r.toString().getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(text, 0, line, 0, text.length);
            f.seek((long) slot * LeaseRecord.SLOT);
            f.write(line);
        }
    }

    @Test
    void aFreeLease_isTakenAtOnce_andEachTakeoverIsANewEpoch_theHighestSlotWins() throws Exception {
        try (Lease first = open(Duration.ofSeconds(10))) {
            assertThat(first.poll()).isTrue();
            assertThat(first.epoch()).isEqualTo(1);
        }
        // a holder that died (its life lock gone with it) of a newer epoch, in the other slot
        plant(new LeaseRecord(7, 3, "node01:7321", 1, Instant.parse("2026-12-03T12:00:00Z")), 1);
        try (Lease second = open(Duration.ofSeconds(10))) {
            assertThat(second.poll()).as("its holder died: taken without waiting").isTrue();
            assertThat(second.epoch()).isEqualTo(8);
            long taken = second.current().orElseThrow().seq();
            second.renew();
            second.renew();
            // at least the two renewals: its own renewer (every 2.5 s) may have added one on a stalled machine
            assertThat(second.current().orElseThrow().seq()).isGreaterThanOrEqualTo(taken + 2);
            assertThat(second.current().orElseThrow().epoch()).isEqualTo(8);
            assertThat(stops).isEmpty();
        }
    }

    /** A process of its own holding the given bytes of the lock file, as a live (or stopped) authority does. */
    private static Process locking(Path file, long... bytes) throws Exception {
        StringBuilder lock = new StringBuilder();
        for (long b : bytes) {
            lock.append("fcntl.lockf(fd, fcntl.LOCK_EX|fcntl.LOCK_NB, 1, ").append(b).append(")\n");
        }
        Process p = new ProcessBuilder("python3", "-c", "import fcntl,os,sys\n"
                + "fd=os.open(sys.argv[1], os.O_RDWR|os.O_CREAT)\n" + lock + "print('held', flush=True)\n"
                + "sys.stdin.read()\n", file.toString()).start();
        assertThat(new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine())
                .isEqualTo("held");
        return p;
    }

    @Test
    void aLiveHolder_isTakenFromOnlyAfterItsLeaseStayedUnchangedForTheTimeout() throws Exception {
        plant(new LeaseRecord(4, 9, "node01:7321", 1, Instant.parse("2026-12-03T12:00:00Z")), 0);
        Process holder = locking(tmp.resolve("lock"), LeaseFile.lifeByte(4), 1);
        try (Lease standby = open(Duration.ofMillis(600))) {
            long t0 = System.nanoTime();
            assertThat(standby.poll()).isFalse();
            assertThat(standby.current().orElseThrow().holder()).isEqualTo("node01:7321");
            Thread.sleep(300); // the holder renews half-way through the timeout
            plant(new LeaseRecord(4, 10, "node01:7321", 1, Instant.parse("2026-12-03T12:00:00Z")), 1); // renewed
            long renewed = System.nanoTime();
            Polls.until("taken", () -> {
                if (standby.poll()) {
                    return true;
                }
                assertThat((System.nanoTime() - t0) / 1_000_000).as("taken within the timeout after the renewal")
                        .isLessThan(3_000);
                return false;
            });
            long tookMs = (System.nanoTime() - renewed) / 1_000_000;
            assertThat(tookMs).as("not before the timeout after the last renewal").isGreaterThanOrEqualTo(600);
            assertThat(tookMs).as("its renewal lock free, its lease as last seen: served at once").isLessThan(1_050);
            assertThat(standby.epoch()).isEqualTo(5);
        } finally {
            holder.destroy();
        }
    }

    /** FailoverIT's SIGSTOP can land inside a renewal: the holder then keeps its renewal lock, and nothing else. */
    @Test
    void aHolderStoppedInsideItsRenewal_isTakenFromAfterTheTimeout_servingWhenAnyRenewalOfItRanOut() throws Exception {
        plant(new LeaseRecord(4, 9, "node01:7321", 1, Instant.parse("2026-12-03T12:00:00Z")), 0);
        Process holder = locking(tmp.resolve("lock"), LeaseFile.lifeByte(4), LeaseFile.renewalByte(4), 1);
        try (Lease standby = open(Duration.ofMillis(600))) {
            long t0 = System.nanoTime();
            java.util.concurrent.atomic.AtomicLong waitingSeen = new java.util.concurrent.atomic.AtomicLong(-1);
            java.util.concurrent.atomic.AtomicReference<String> followedWhileWaiting =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Thread querier = new Thread(() -> { // as the standby's socket answers QUERY meanwhile
                while (!Thread.currentThread().isInterrupted() && waitingSeen.get() < 0) {
                    standby.servingIn().ifPresent(ms -> {
                        followedWhileWaiting.set(standby.current().orElseThrow().holder());
                        waitingSeen.set(ms);
                    });
                    try {
                        Thread.sleep(5); // the pace of a socket's QUERYs
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            querier.start();
            Polls.until("taken", () -> {
                if (standby.poll()) {
                    return true;
                }
                assertThat((System.nanoTime() - t0) / 1_000_000).as("taken, not waiting on the stopped holder")
                        .isLessThan(5_000);
                return false;
            });
            querier.interrupt();
            querier.join();
            assertThat((System.nanoTime() - t0) / 1_000_000).as("the timeout, then three quarters of it")
                    .isGreaterThanOrEqualTo(600 + 450);
            assertThat(waitingSeen.get()).as("while it waits to serve, in how long it serves").isBetween(1L, 450L);
            assertThat(followedWhileWaiting.get()).as("and it still follows the former").isEqualTo("node01:7321");
            assertThat(standby.servingIn()).as("serving: no longer waiting").isEmpty();
            assertThat(standby.epoch()).isEqualTo(5);
            // its renewer runs too (every 150 ms), so the count may move on by more than this one renewal
            long seq = standby.current().orElseThrow().seq();
            long before = System.nanoTime();
            standby.renew();
            assertThat((System.nanoTime() - before) / 1_000_000).as("its own renewals never wait on the former's")
                    .isLessThan(300);
            assertThat(standby.current().orElseThrow().seq()).as("renewed").isGreaterThan(seq);
            assertThat(standby.current().orElseThrow().epoch()).isEqualTo(5);
            assertThat(stops).isEmpty();
        } finally {
            holder.destroy();
        }
    }

    /** After a takeover from a stopped holder the new one may not hold byte 1 yet; the current epoch's life decides. */
    @Test
    void aLiveHolder_isNotTakenFromWhileItRenews_evenWithByte1Free() throws Exception {
        plant(new LeaseRecord(5, 0, "node02:7321", 1, Instant.parse("2026-12-03T12:00:00Z")), 2);
        Process holder = locking(tmp.resolve("lock"), LeaseFile.lifeByte(5));
        try (Lease standby = open(Duration.ofMillis(400))) {
            for (int i = 1; i <= 12; i++) {
                assertThat(standby.poll()).as("poll " + i).isFalse();
                Thread.sleep(50); // the thing tested: a holder renewing every 50 ms, 600 ms in all, past the timeout
                plant(new LeaseRecord(5, i, "node02:7321", 1, Instant.parse("2026-12-03T12:00:00Z")), 2 + i % 2);
            }
            assertThat(standby.current().orElseThrow().seq()).isEqualTo(11);
        } finally {
            holder.destroy();
        }
    }

    @Test
    void aLockHolderThatKeepsNoLease_isNeverTakenFrom() throws Exception {
        Files.writeString(tmp.resolve("lock"), "4711\n"); // a host's rsmapd, or a release before leases
        Process holder = locking(tmp.resolve("lock"), 1);
        try (Lease standby = open(Duration.ofMillis(100))) {
            for (int i = 0; i < 10; i++) {
                assertThat(standby.poll()).isFalse();
                Thread.sleep(30); // the thing tested: 300 ms, three times the timeout, and never taken
            }
            assertThat(standby.current()).isEmpty();
        } finally {
            holder.destroy();
        }
    }

    @Test
    void aHolderThatFindsANewerEpoch_stopsSayingWhy_andItsChecksStopItToo() throws Exception {
        try (Lease active = open(Duration.ofMillis(400))) {
            assertThat(active.poll()).isTrue();
            active.check(); // just renewed: nothing to read
            assertThat(stops).isEmpty();
            plant(new LeaseRecord(2, 0, "node01:7321", 1, Instant.parse("2026-12-03T12:00:00Z")), 1);
            Thread.sleep(350); // the thing tested: past three quarters of the timeout, the check reads the lease
            active.check();
            assertThat(stops).isNotEmpty();
            assertThat(stops.get(0)).isEqualTo("the authority node00:7321 lost its lease on " + tmp + " (its epoch 1; now "
                    + "epoch 2, node01:7321, since 2026-12-03T12:00:00Z): another authority is active; this one answers"
                    + " nothing more and stops");
            assertThat(active.epoch()).isZero();
            int before = stops.size();
            active.check();
            assertThat(stops.size()).as("every later check stops it again").isGreaterThan(before);
            assertThat(Optional.of(active.pollMillis())).contains(50L);
        }
    }
}
