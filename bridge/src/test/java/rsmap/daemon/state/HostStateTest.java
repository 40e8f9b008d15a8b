// HostState's verbs carry what follows from them: QUERY's cached answer is dropped and the job's environment
// file written or removed by the verb itself, never by a caller remembering to.
package rsmap.daemon.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.alloc.Cluster;
import rsmap.alloc.Grant;
import rsmap.complex.ComplexTable;
import rsmap.daemon.TestDaemon;
import rsmap.daemon.config.Config;
import rsmap.daemon.devices.CdiSpecs;
import rsmap.daemon.devices.EnvFiles;
import rsmap.daemon.devices.HostDeviceViews;
import rsmap.daemon.devices.HostDevices;
import rsmap.daemon.devices.MigHost;
import rsmap.device.DevicePolicy;
import rsmap.log.LogBook;
import rsmap.map.ComplexValues;

class HostStateTest {
    @TempDir
    Path tmp;
    /** The seam over the last {@link #state()}: its environment files follow hold and end. */
    private HostDevices devices;

    private HostState state() throws Exception {
        Config config = TestDaemon.config(tmp.resolve("d"), "gpu=2(0 1)");
        EnvFiles files = new EnvFiles(tmp.resolve("state"), new LogBook());
        HostState s = new HostState(config, ComplexTable.parse(Files.readString(config.complexes())), Scope.HOST,
                new AfterAnswer(files), HostDeviceViews.none(config.host()));
        devices = new HostDevices(s, HostDeviceViews.none(config.host()), new HostDevices.Parts(files, CdiSpecs.NONE, MigHost.none(), HostDevices.noIsolation()),
                new LogBook());
        return s;
    }

    private static Job job(String id, String gpus) {
        return new Job(JobId.parse(id).orElseThrow(), System.getProperty("user.name"), "gpu=1", 1, Grant.NONE, Grant.NONE, Grant.NONE,
                Map.of("SGE_HGR_gpu", gpus), Map.of());
    }

    @Test
    void everyVerb_dropsTheCachedQueryAnswerOfEveryViewer() throws Exception {
        HostState s = state();
        List<Runnable> verbs = List.of(() -> s.hold(job("7", "0")), () -> s.hold(job("7", "0 1")),
                () -> s.drop(JobId.parse("7").orElseThrow()), () -> s.configured(2, "gpu=2(0 1)", ""), () -> s.reallocSettings(false,
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
        devices.hold(job("7", "0"));
        assertThat(Files.readString(file)).isEqualTo("SGE_HGR_gpu=0\n");
        devices.hold(job("7", "0 1")); // a realloc's new environment
        assertThat(Files.readString(file)).isEqualTo("SGE_HGR_gpu=0 1\n");
        devices.ended(JobId.parse("7").orElseThrow());
        assertThat(file).doesNotExist();
        assertThat(s.job(JobId.parse("7").orElseThrow())).isEmpty();
    }

    @Test
    void onAnAuthority_noEnvironmentFileIsWritten() throws Exception {
        Config config = TestDaemon.config(tmp.resolve("a"), "gpu=2(0 1)");
        HostState s = new HostState(config, ComplexTable.parse(Files.readString(config.complexes())),
                Scope.AUTHORITY, new AfterAnswer(EnvFiles.none()), HostDeviceViews.none(config.host()));
        new HostDevices(s, HostDeviceViews.none(config.host()), HostDevices.Parts.none(), new LogBook()).hold(job("node01:7", "0"));
        assertThat(s.job(JobId.parse("node01:7").orElseThrow())).isPresent();
        assertThat(tmp.resolve("a").resolve("state").resolve("env")).doesNotExist();
    }

    /**
     * The remembered answer of "does any instance list devices" (which closes every job's policy) is never
     * stale: each reconfiguration in place, each new core, changes it at once, either way (seeded: 300 steps
     * over this host and the global host, each answer asked twice and held against a fresh look).
     */
    @Test
    void devicesListed_followsEveryReconfiguration() throws Exception {
        HostState s = state();
        ComplexTable table = s.table;
        String[] values = {"gpu=2(0 1)", "gpu=2(0[devices=/dev/null:rw] 1)", "gpu=2(0 1[devices=/dev/zero:r])",
            "nic=1(ib0)", "nic=2(ib0 ib1[devices=/dev/null:rw])", "NONE"};
        Random random = new Random(20261204L);
        Cluster cluster = new Cluster(table);
        s.install(cluster, s.reallocsOver(cluster));
        long time = 0;
        for (int step = 0; step < 300; step++) {
            if (random.nextInt(10) == 0) { // a new core (RELOAD): its hosts configured afresh
                cluster = new Cluster(table);
                s.install(cluster, s.reallocsOver(cluster));
            }
            String host = random.nextBoolean() ? s.host() : "global";
            cluster.configure(host, ComplexValues.parse(values[random.nextInt(values.length)], table), ++time);
            boolean fresh = DevicePolicy.listsDevices(cluster.hosts().values());
            assertThat(s.devicesListed()).as("step %d", step).isEqualTo(fresh);
            assertThat(s.devicesListed()).as("step %d, asked again", step).isEqualTo(fresh);
        }
    }

    @Test
    void devicesListed_turnsOnWhenAHostsMapsChangeInPlace() throws Exception {
        HostState s = state();
        Cluster cluster = new Cluster(s.table);
        s.install(cluster, s.reallocsOver(cluster));
        cluster.configure(s.host(), ComplexValues.parse("gpu=2(0 1)", s.table), 1);
        assertThat(s.devicesListed()).isFalse();
        cluster.configure(s.host(), ComplexValues.parse("gpu=2(0 1[devices=/dev/null:rw])", s.table), 2);
        assertThat(s.devicesListed()).as("a device listed by the same core, reconfigured").isTrue();
        cluster.configure(s.host(), ComplexValues.parse("gpu=2(0 1)", s.table), 3);
        assertThat(s.devicesListed()).isFalse();
    }
}
