// The lease's file (docs/cluster.md, "The lease"): one channel per state directory and process, since closing a
// second would drop the first's POSIX locks; a symbolic link in its place is not followed; the record forced.
package rsmap.daemon.authority;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.records.StateLock;

class LeaseFileTest {
    @TempDir
    Path tmp;

    @Test
    void open_twiceInOneProcess_refusedWithTheReason_andFreeAgainOnceClosed() throws Exception {
        LeaseFile first = LeaseFile.open(tmp);
        FileLock life = first.tryLock(LeaseFile.lifeByte(1));
        assertThat(life).isNotNull();
        assertThatThrownBy(() -> LeaseFile.open(tmp.resolve(".").resolve("")))
                .isInstanceOf(IOException.class)
                .hasMessageEndingWith(" is in use by another rsmapd in this process; one daemon per state directory"
                        + " and process");
        assertThat(life.isValid()).as("the refused second open drops no lock of the first").isTrue();
        first.close();
        assertThat(life.isValid()).isFalse();
        try (LeaseFile again = LeaseFile.open(tmp)) {
            assertThat(again.tryLock(LeaseFile.lifeByte(1))).isNotNull();
        }
    }

    @Test
    void aHostsStateLockAndALeaseFile_onOneDirectoryInOneProcess_eachRefusesTheOther() throws Exception {
        try (StateLock host = StateLock.acquire(tmp)) {
            assertThatThrownBy(() -> LeaseFile.open(tmp)).isInstanceOf(IOException.class)
                    .hasMessageContaining("is in use by another rsmapd in this process");
        }
        try (LeaseFile lease = LeaseFile.open(tmp)) {
            FileLock life = lease.tryLock(LeaseFile.lifeByte(1));
            assertThatThrownBy(() -> StateLock.acquire(tmp)).isInstanceOf(IOException.class)
                    .hasMessageContaining("is in use by another rsmapd");
            assertThat(life.isValid()).as("the refused StateLock opened no channel to close").isTrue();
        }
    }

    @Test
    void open_aSymbolicLinkInThePlaceOfTheFile_notFollowed() throws Exception {
        Path elsewhere = Files.writeString(tmp.resolve("elsewhere"), "");
        Path dir = Files.createDirectories(tmp.resolve("state"));
        Files.createSymbolicLink(dir.resolve("lock"), elsewhere);
        assertThatThrownBy(() -> LeaseFile.open(dir)).isInstanceOf(IOException.class)
                .hasMessage(dir.resolve("lock") + ": cannot open the lease: it is a symbolic link, not followed");
        try (LeaseFile f = LeaseFile.open(tmp)) {
            assertThat(f.path()).isEqualTo(tmp.resolve("lock")); // the refused one was let go
        }
    }

    @Test
    void write_thenRead_theNewestRecord_andEachEpochsOwn() throws Exception {
        try (LeaseFile f = LeaseFile.open(tmp)) {
            assertThat(f.read()).isEmpty();
            LeaseRecord three = LeaseRecord.first(3, "node00:7321");
            f.write(three);
            LeaseRecord four = LeaseRecord.first(4, "node01:7321");
            f.write(four);
            assertThat(f.read()).contains(four);
            assertThat(f.read(3)).contains(three);
            assertThat(f.read(5)).isEmpty();
        }
        assertThat(Files.size(tmp.resolve("lock"))).isPositive();
    }
}
