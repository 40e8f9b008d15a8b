// The journal: replay, torn tails cut off, atomic compaction - and a child process killed with SIGKILL
// at random instants never loses an acknowledged record nor doubles one.
package rsmap.journal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.wire.Polls;

class JournalTest {
    private static final long SEED = Long.getLong("rsmap.seed", 5L);

    @TempDir
    Path tmp;

    @Test
    void append_thenOpen_replaysInOrder() throws Exception {
        Path f = tmp.resolve("journal");
        try (Journal j = Journal.open(f)) {
            assertThat(j.replayed()).isEmpty();
            j.append("{\"grant\":\"7\"}");
            j.append("ü and spaces");
        }
        try (Journal j = Journal.open(f)) {
            assertThat(j.replayed()).containsExactly("{\"grant\":\"7\"}", "ü and spaces");
            j.append("third");
        }
        assertThat(Journal.open(f).replayed()).hasSize(3);
    }

    @Test
    void open_tornTail_isCutAndAppendingGoesOn() throws Exception {
        Path f = tmp.resolve("journal");
        try (Journal j = Journal.open(f)) {
            j.append("one");
            j.append("two");
        }
        byte[] torn = JournalLine.encode("three");
        Files.write(f, java.util.Arrays.copyOf(torn, torn.length - 3), StandardOpenOption.APPEND);
        try (Journal j = Journal.open(f)) {
            assertThat(j.replayed()).containsExactly("one", "two");
            j.append("four");
        }
        assertThat(Journal.open(f).replayed()).containsExactly("one", "two", "four");
    }

    @Test
    void open_damagedLine_keepsWhatComesBefore() throws Exception {
        Path f = tmp.resolve("journal");
        try (Journal j = Journal.open(f)) {
            j.append("one");
            j.append("two");
        }
        byte[] all = Files.readAllBytes(f);
        all[all.length - 2] ^= 1; // flip a bit of "two"
        Files.write(f, all);
        assertThat(Journal.open(f).replayed()).containsExactly("one");
    }

    @Test
    void open_damageInTheMiddle_isRefusedWithItsPlace_neverCutSilently() throws Exception {
        Path f = tmp.resolve("journal");
        try (Journal j = Journal.open(f)) {
            j.append("one");
            j.append("two");
            j.append("three");
        }
        byte[] all = Files.readAllBytes(f);
        int second = JournalLine.encode("one").length;
        all[second + JournalLine.encode("two").length - 2] ^= 1; // flip a bit of "two"; "three" follows intact
        Files.write(f, all);
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> Journal.open(f)))
                .isInstanceOf(java.io.IOException.class)
                .hasMessage(f + ": record 2 (byte " + second + ") is damaged and more records follow it; rsmapd will not"
                        + " guess which grants are held");
        assertThat(Files.readAllBytes(f)).isEqualTo(all); // left as it was, for the admin to look at
    }

    @Test
    void compact_replacesTheJournal_andAnUnfinishedOneIsIgnored() throws Exception {
        Path f = tmp.resolve("journal");
        try (Journal j = Journal.open(f)) {
            for (int i = 0; i < 10; i++) {
                j.append("r" + i);
            }
            j.compact(List.of("snapshot"));
            j.append("after");
        }
        Files.writeString(tmp.resolve("journal.tmp"), "half a compaction");
        assertThat(Journal.open(f).replayed()).containsExactly("snapshot", "after");
        assertThat(tmp.resolve("journal.tmp")).doesNotExist();
    }

    @Test
    void append_lineFeed_isRefused() throws Exception {
        try (Journal j = Journal.open(tmp.resolve("journal"))) {
            assertThatThrownBy(() -> j.append("a\nb")).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void sigkillAtRandomInstants_neverLosesAnAcknowledgedRecord_norDoublesOne() throws Exception {
        killLoop(tmp.resolve("plain"), "append", new Random(SEED));
    }

    @Test
    void sigkillDuringCompactions_neverLosesAnAcknowledgedRecord_norDoublesOne() throws Exception {
        killLoop(tmp.resolve("compacted"), "compact", new Random(SEED + 1));
    }

    @Test
    void sigkillWhileForcingAhead_neverLosesAnAcknowledgedRecord_norDoublesOne() throws Exception {
        killLoop(tmp.resolve("ahead"), "ahead", new Random(SEED + 2));
    }

    @Test
    void sigkillWhileTheKernelWritesBack_andCompacting_neverLosesAnAcknowledgedRecord_norDoublesOne() throws Exception {
        killLoop(tmp.resolve("writeback"), "writeback", new Random(SEED + 4));
    }

    /**
     * Forcing ahead where the kernel's write-back cannot be asked for: many threads write, ask the journal's
     * thread to force, and sync; every record is replayed, and close stops the journal's thread.
     */
    @Test
    void forceSoon_fromManyThreads_thenSync_allReplayed_andCloseStopsItsThread() throws Exception {
        Path f = tmp.resolve("journal");
        Journal j = Journal.open(f, false);
        forcedFromThreads(j, 0, 300);
        assertThat(forcers()).isEqualTo(1);
        j.close();
        j.forceSoon(); // after close: nothing started again
        Polls.await(Duration.ofSeconds(10), () -> forcers() == 0);
        assertThat(forcers()).as("the journal's thread ends with the journal").isZero();
        try (Journal again = Journal.open(f)) {
            assertThat(again.replayed()).hasSize(300);
        }
    }

    /**
     * The daemon's job path on Linux: forceSoon asks the kernel's write-back from the caller's thread
     * (sync_file_range), so no journal thread is started, before or after a compaction (which replaces the
     * file that the write-back names); every record synced after the compaction is replayed behind its snapshot.
     */
    @Test
    void forceSoon_onLinux_startsTheKernelsWriteback_withoutAThread_alsoAfterACompaction() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(com.sun.jna.Platform.isLinux(), "sync_file_range is Linux's");
        Path f = tmp.resolve("writeback");
        try (Journal j = Journal.open(f)) {
            forcedFromThreads(j, 0, 100);
            j.compact(List.of("{\"snapshot\":1}"));
            forcedFromThreads(j, 1, 100);
            forcedFromThreads(j, 2, 100);
            assertThat(forcers()).as("no journal thread where the kernel writes back").isZero();
            Writeback w = Writeback.open(f);
            assertThat(w).as("sync_file_range on Linux").isNotNull();
            assertThat(w.start()).isTrue();
            w.close();
        }
        try (Journal again = Journal.open(f)) {
            assertThat(again.replayed()).hasSize(201).first().isEqualTo("{\"snapshot\":1}");
            assertThat(again.replayed().subList(1, 201)).doesNotHaveDuplicates()
                    .allMatch(r -> r.startsWith("{\"round\":1") || r.startsWith("{\"round\":2"));
        }
    }

    /** {@code n} records of {@code round}, each written, forced soon and synced by one of 8 threads. */
    private static void forcedFromThreads(Journal j, int round, int n) throws Exception {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        try {
            List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) {
                String r = "{\"round\":" + round + ",\"n\":" + i + "}";
                done.add(pool.submit(() -> {
                    j.write(r);
                    j.forceSoon();
                    j.sync();
                    return null;
                }));
            }
            for (java.util.concurrent.Future<?> d : done) {
                d.get();
            }
        } finally {
            pool.shutdown();
        }
    }

    /** Records put after the journal is opened again go right behind its last one (the end is kept, not asked). */
    @Test
    void reopened_recordsGoBehindTheLastOne_andTheZerosAheadAreCutAtClose() throws Exception {
        Path f = tmp.resolve("ends");
        for (int round = 0; round < 4; round++) {
            try (Journal j = Journal.open(f)) {
                assertThat(j.replayed()).hasSize(round * 3);
                for (int i = 0; i < 3; i++) {
                    j.write("r" + round + "." + i);
                    j.forceSoon();
                    j.sync();
                }
            }
            byte[] rest = Files.readAllBytes(f);
            assertThat(rest).as("every record, then no zeros at rest").hasSize((round + 1) * 3 * (18 + 4 + 1))
                    .doesNotContain((byte) 0);
        }
    }

    private static long forcers() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("journal-force") && t.isAlive()).count();
    }

    /** The head is what "%08x %08x " wrote before, for records of any length and content (a seeded sample). */
    @Test
    void encode_headIsCrcAndLengthIn8HexDigits_asTheFormatterWroteIt() {
        Random rnd = new Random(SEED + 3);
        for (int n = 0; n < 2000; n++) {
            StringBuilder b = new StringBuilder();
            int len = rnd.nextInt(n % 10 == 0 ? 70_000 : 300);
            for (int i = 0; i < len; i++) {
                char c = (char) (rnd.nextInt(4) == 0 ? 0x20 + rnd.nextInt(0x3000) : 0x20 + rnd.nextInt(0x5f));
                b.append(c == '\n' ? ' ' : c);
            }
            byte[] body = b.toString().getBytes(StandardCharsets.UTF_8);
            java.util.zip.CRC32 crc = new java.util.zip.CRC32();
            crc.update(body);
            String head = String.format("%08x %08x ", crc.getValue(), body.length);
            byte[] line = JournalLine.encode(b.toString());
            assertThat(new String(line, 0, 18, StandardCharsets.US_ASCII)).isEqualTo(head);
            assertThat(JournalLine.decode(line, 0, line.length - 1)).isEqualTo(b.toString());
        }
    }

    private static void killLoop(Path f, String mode, Random rnd) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        int acked = -1;
        for (int round = 0; round < 8; round++) {
            Process child = new ProcessBuilder(java, "-Xmx64m", "-XX:TieredStopAtLevel=1", "-cp",
                    System.getProperty("java.class.path"), JournalWriter.class.getName(), f.toString(), mode)
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            int wanted = 1 + rnd.nextInt(150);
            for (int seen = 0; seen < wanted; seen++) {
                String line = out.readLine();
                assertThat(line).as("the writer died early").isNotNull();
                acked = Integer.parseInt(line.substring(4));
            }
            if (rnd.nextBoolean()) {
                Thread.sleep(rnd.nextInt(3)); // kill between acknowledgements, not only right after one
            }
            child.destroyForcibly(); // SIGKILL
            assertThat(child.waitFor(20, TimeUnit.SECONDS)).isTrue();
            List<String> records = Journal.open(f).replayed();
            assertThat(records.size()).as("round %d: every acknowledged record is there", round).isGreaterThan(acked);
            for (int i = 0; i < records.size(); i++) {
                assertThat(records.get(i)).as("round %d: no record lost or doubled", round)
                        .isEqualTo("r" + i + " " + "x".repeat(i % 97));
            }
        }
    }

    /** Group commit: written records, forced once for all who sync; close forces what is left. */
    @Test
    void write_thenSyncFromManyThreads_allReplayed_andCloseForcesWhatWasNotSynced() throws Exception {
        Path f = tmp.resolve("journal");
        Journal j = Journal.open(f);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
        for (int i = 0; i < 200; i++) {
            String r = "{\"n\":" + i + "}";
            done.add(pool.submit(() -> {
                synchronized (j) {
                    j.write(r);
                }
                j.sync();
                return null;
            }));
        }
        for (java.util.concurrent.Future<?> d : done) {
            d.get();
        }
        pool.shutdown();
        j.write("{\"n\":\"unsynced\"}");
        j.close();
        j.sync(); // after close: everything was forced by close, nothing to do, no failure
        try (Journal again = Journal.open(f)) {
            assertThat(again.replayed()).hasSize(201).last().isEqualTo("{\"n\":\"unsynced\"}");
        }
    }

    /** Zero-filled ahead while open (no size change per record); cut by open after a crash, and by close. */
    @Test
    void write_fillsAhead_aCrashLeavesZerosThatOpenCuts_andCloseLeavesOnlyTheRecords() throws Exception {
        Path f = tmp.resolve("journal");
        Journal j = Journal.open(f);
        j.write("one");
        j.write("two");
        j.sync();
        assertThat(Files.size(f)).isGreaterThanOrEqualTo(Journal.AHEAD);
        Path crashed = Files.copy(f, tmp.resolve("crashed")); // what a SIGKILL leaves on disk
        try (Journal again = Journal.open(crashed)) {
            assertThat(again.replayed()).containsExactly("one", "two");
            again.write("three");
        }
        try (Journal third = Journal.open(crashed)) {
            assertThat(third.replayed()).containsExactly("one", "two", "three");
        }
        j.close();
        assertThat(Files.size(f)).isEqualTo(JournalLine.encode("one").length + JournalLine.encode("two").length);
    }
}
