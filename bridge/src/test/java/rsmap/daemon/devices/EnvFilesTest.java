// The jobs' environment files (docs/isolation.md, "The state directory"): the owner's uid is looked up once a
// minute, not per job start, so a user renumbered while rsmapd runs shows within that minute; a user not found
// is asked again; a directory removed while rsmapd runs is made again at the next write.
package rsmap.daemon.devices;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.log.LogBook;
import rsmap.daemon.state.JobId;

class EnvFilesTest {
    private static JobId id(String text) {
        return JobId.parse(text).orElseThrow();
    }

    @TempDir
    Path tmp;
    private final AtomicLong clock = new AtomicLong(1_000);
    private final AtomicInteger lookups = new AtomicInteger();
    /** The name service as the test has it: user name to the real system user it resolves to now. */
    private final Map<String, String> passwd = new LinkedHashMap<>();
    private final LogBook log = new LogBook();

    private EnvFiles files() {
        return new EnvFiles(tmp, log, user -> {
            lookups.incrementAndGet();
            String real = passwd.get(user);
            if (real == null) {
                throw new UserPrincipalNotFoundException(user);
            }
            return tmp.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(real);
        }, clock::get);
    }

    private String owner(EnvFiles f, String job) throws IOException {
        return Files.getOwner(f.of(id(job)), LinkOption.NOFOLLOW_LINKS).getName();
    }

    private static String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void theOwnersUid_isLookedUpOncePerMinute_aRenumberedUserShowsAfterIt() throws Exception {
        EnvFiles f = files();
        passwd.put("alice", "nobody");
        f.write(id("1"), "alice", Map.of("SGE_HGR_gpu", "0"));
        passwd.put("alice", "daemon"); // renumbered in the name service while rsmapd runs
        clock.addAndGet(EnvFiles.OWNER_TTL_NANOS - 1);
        f.write(id("2"), "alice", Map.of("SGE_HGR_gpu", "1"));
        assertThat(lookups).hasValue(1);
        assertThat(owner(f, "1")).isEqualTo("nobody");
        assertThat(owner(f, "2")).as("within the minute: the uid looked up before").isEqualTo("nobody");
        clock.addAndGet(1);
        f.write(id("3"), "alice", Map.of("SGE_HGR_gpu", "1"));
        assertThat(lookups).hasValue(2);
        assertThat(owner(f, "3")).as("after it: asked again").isEqualTo("daemon");
        assertThat(mode(f.of(id("3")))).isEqualTo("r--------");
        assertThat(Files.readString(f.of(id("3")))).isEqualTo("SGE_HGR_gpu=1\n");
    }

    @Test
    void aUserNotFound_isAskedAgainAtTheNextWrite_andTheFileStaysRoots() throws Exception {
        EnvFiles f = files();
        f.write(id("1"), "ghost", Map.of("SGE_HGR_nic", "ib0"));
        assertThat(owner(f, "1")).isEqualTo("root");
        assertThat(mode(f.of(id("1")))).isEqualTo("r--------");
        assertThat(log.lines()).anyMatch(l -> l.contains("stays readable by root only") && l.contains("'ghost'"));
        passwd.put("ghost", "nobody"); // added to the name service
        f.write(id("2"), "ghost", Map.of("SGE_HGR_nic", "ib0"));
        assertThat(lookups).hasValue(2);
        assertThat(owner(f, "2")).isEqualTo("nobody");
    }

    @Test
    void theDirectory_isMadeAgainWhenRemovedWhileRunning_andItsModeSetBackWhenWidened() throws Exception {
        EnvFiles f = files();
        passwd.put("alice", "nobody");
        f.write(id("1"), "alice", Map.of("SGE_HGR_gpu", "0"));
        assertThat(mode(tmp.resolve("env"))).isEqualTo("rwx--x--x");
        Files.delete(f.of(id("1")));
        Files.delete(tmp.resolve("env"));
        f.write(id("2"), "alice", Map.of("SGE_HGR_gpu", "0"));
        assertThat(mode(tmp.resolve("env"))).isEqualTo("rwx--x--x");
        assertThat(owner(f, "2")).isEqualTo("nobody");
        assertThat(log.lines()).noneMatch(l -> l.contains("cannot write"));
        Files.setPosixFilePermissions(tmp.resolve("env"), java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        f.write(id("3"), "alice", Map.of("SGE_HGR_gpu", "0"));
        assertThat(mode(tmp.resolve("env"))).as("nobody lists the jobs, even after someone widened it").isEqualTo("rwx--x--x");
    }

    @Test
    void aTemporaryFileLeftBehind_isReplaced_neverWrittenThrough() throws Exception {
        EnvFiles f = files();
        passwd.put("alice", "nobody");
        f.write(id("2"), "alice", Map.of("SGE_HGR_gpu", "0")); // its first file, made in place
        Path victim = Files.writeString(tmp.resolve("victim"), "precious\n");
        Files.createSymbolicLink(tmp.resolve("env").resolve(".2.tmp"), victim);
        f.write(id("2"), "alice", Map.of("SGE_HGR_gpu", "1")); // a rewrite goes through the temporary file
        assertThat(Files.readString(victim)).isEqualTo("precious\n");
        assertThat(Files.readString(f.of(id("2")))).isEqualTo("SGE_HGR_gpu=1\n");
        assertThat(Files.exists(tmp.resolve("env").resolve(".2.tmp"), LinkOption.NOFOLLOW_LINKS)).isFalse();
    }

    @Test
    void aJobsFirstFile_isMadeInPlace_aRewriteReplacesItWhole_andAPlantedLinkIsReplacedNotFollowed() throws Exception {
        EnvFiles f = files();
        passwd.put("alice", "nobody");
        f.write(id("1"), "alice", Map.of("SGE_HGR_gpu", "0"));
        assertThat(mode(f.of(id("1")))).isEqualTo("r--------");
        assertThat(owner(f, "1")).isEqualTo("nobody");
        f.write(id("1"), "alice", Map.of("SGE_HGR_gpu", "0 1")); // a realloc's rewrite: a file is there already
        assertThat(Files.readString(f.of(id("1")))).isEqualTo("SGE_HGR_gpu=0 1\n");
        assertThat(mode(f.of(id("1")))).isEqualTo("r--------");
        assertThat(owner(f, "1")).isEqualTo("nobody");
        Path victim = Files.writeString(tmp.resolve("victim"), "precious\n");
        Files.createSymbolicLink(f.of(id("2")), victim);
        f.write(id("2"), "alice", Map.of("SGE_HGR_gpu", "1"));
        assertThat(Files.readString(victim)).isEqualTo("precious\n");
        assertThat(Files.isSymbolicLink(f.of(id("2")))).isFalse();
        assertThat(Files.readString(f.of(id("2")))).isEqualTo("SGE_HGR_gpu=1\n");
        assertThat(owner(f, "2")).isEqualTo("nobody");
        try (var names = Files.list(tmp.resolve("env"))) {
            assertThat(names.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("1", "2");
        }
    }

    @Test
    void read_givesWhatWasWritten_nothingThroughALinkOrForAJobWithoutAFile() throws Exception {
        EnvFiles f = files();
        passwd.put("alice", "nobody");
        Map<String, String> env = new LinkedHashMap<>();
        env.put("SGE_HGR_mig", "MIG-a MIG-b");
        env.put("CUDA_VISIBLE_DEVICES", "MIG-a,MIG-b");
        f.write(id("7"), "alice", env);
        assertThat(f.read(id("7"))).isEqualTo(env);
        assertThat(f.read(id("8"))).isEmpty();
        Path elsewhere = tmp.resolve("elsewhere");
        Files.writeString(elsewhere, "SGE_HGR_mig=MIG-planted\n");
        Files.createSymbolicLink(f.of(id("9")), elsewhere);
        assertThat(f.read(id("9"))).as("a link is not followed").isEmpty();
    }
}
