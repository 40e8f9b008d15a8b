// HostState's verbs carry what follows from them: QUERY's cached answer is dropped and the job's environment
// file written or removed by the verb itself, never by a caller remembering to.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.alloc.Grant;
import rsmap.complex.ComplexTable;

class HostStateTest {
    @TempDir
    Path tmp;

    private HostState state() throws Exception {
        Config config = TestDaemon.config(tmp.resolve("d"), "gpu=2(0 1)");
        return new HostState(config, ComplexTable.parse(Files.readString(config.complexes())),
                new EnvFiles(tmp.resolve("state"), new LogBook()), Scope.HOST);
    }

    private static Job job(String id, String gpus) {
        return new Job(id, System.getProperty("user.name"), "gpu=1", 1, Grant.NONE, Grant.NONE, Grant.NONE,
                Map.of("SGE_HGR_gpu", gpus), Map.of());
    }

    @Test
    void everyVerb_dropsTheCachedQueryAnswerOfEveryViewer() throws Exception {
        HostState s = state();
        List<Runnable> verbs = List.of(() -> s.hold(job("7", "0")), () -> s.hold(job("7", "0 1")),
                () -> s.drop("7"), () -> s.configured(2, "gpu=2(0 1)", ""), () -> s.reallocSettings(false,
                        rsmap.realloc.Policy.named("fifo").orElseThrow()), () -> s.leftover("9", List.of(4711L)),
                () -> s.leftoverGone("9"));
        for (Runnable verb : verbs) {
            s.cacheState(null, "{}");
            s.cacheState("alice", "{\"alice\":1}");
            verb.run();
            assertThat(s.cachedState(null)).as("root's view after each verb").isNull();
            assertThat(s.cachedState("alice")).as("a user's view after each verb").isNull();
        }
    }

    @Test
    void holdAndDrop_writeAndRemoveTheEnvironmentFile() throws Exception {
        HostState s = state();
        Path file = tmp.resolve("state").resolve("env").resolve("7");
        s.hold(job("7", "0"));
        assertThat(Files.readString(file)).isEqualTo("SGE_HGR_gpu=0\n");
        s.hold(job("7", "0 1")); // a realloc's new environment
        assertThat(Files.readString(file)).isEqualTo("SGE_HGR_gpu=0 1\n");
        s.drop("7");
        assertThat(file).doesNotExist();
        assertThat(s.job("7")).isEmpty();
    }

    @Test
    void onAnAuthority_noEnvironmentFileIsWritten() throws Exception {
        Config config = TestDaemon.config(tmp.resolve("a"), "gpu=2(0 1)");
        HostState s = new HostState(config, ComplexTable.parse(Files.readString(config.complexes())),
                EnvFiles.none(), Scope.AUTHORITY);
        s.hold(job("node01:7", "0"));
        assertThat(s.job("node01:7")).isPresent();
        assertThat(tmp.resolve("a").resolve("state").resolve("env")).doesNotExist();
    }
}
