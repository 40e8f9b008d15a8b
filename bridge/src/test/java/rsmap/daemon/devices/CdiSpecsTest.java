// docs/containers.md against a real daemon: a job's CDI spec in cdi_dir follows its grant - written at
// JOB_START (0644, root's, valid against the CDI schema), rewritten by a realloc before its ALLOC and by
// RELEASE before its answer, removed at JOB_END; start-up removes rsmapd's files of jobs that are gone and
// no other file; cdi = required fails a start closed naming cdi_dir; cdi = off writes nothing.
package rsmap.daemon.devices;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.cdi.CdiSchema;
import rsmap.daemon.Daemon;
import rsmap.daemon.DaemonSessions;
import rsmap.daemon.GpuStub;
import rsmap.daemon.TestDaemon;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

@Timeout(60)
class CdiSpecsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Two cards: /dev/zero (c 1:5) and /dev/full (c 1:7), and a network port without devices. */
    static final String VALUES = "gpu=2(0[devices=/dev/zero:rw] 1[devices=/dev/full:r]),nic=1(ib0)";
    @TempDir
    Path tmp;
    Daemon daemon;

    @AfterEach
    void stop() throws Exception {
        if (daemon != null) {
            daemon.close();
        }
    }

    private Config config(String... more) throws Exception {
        List<String> settings = new ArrayList<>(List.of("reconcile_interval = 0"));
        settings.addAll(List.of(more));
        return TestDaemon.config(tmp, VALUES, settings.toArray(new String[0]));
    }

    private Path cdi() {
        return tmp.resolve("cdi");
    }

    private Session root() {
        return DaemonSessions.as(daemon, "root", 0, ProcessHandle.current().pid(), new ArrayList<>());
    }

    private static Frame cmd(long tid, Code code, String json) {
        return Frame.of(tid, code.value(), json);
    }

    /** JOB_START of {@code job} (JOB or JOB.TASK). */
    private List<Frame> start(String job, String request) {
        String[] id = job.split("\\.");
        return root().onCommand(cmd(2, Code.JOB_START, "{\"job\":\"" + id[0] + "\"," + (id.length > 1 ? "\"task\":\""
                + id[1] + "\"," : "") + "\"user\":\"root\",\"request\":\"" + request + "\"}"));
    }

    private JsonNode spec(String name) throws Exception {
        Path f = cdi().resolve("rsmapd-job-" + name + ".json");
        assertThat(f).exists();
        CdiSchema.assertValid(List.of(f));
        return JSON.readTree(f.toFile());
    }

    private static List<String> nodes(JsonNode spec) {
        List<String> out = new ArrayList<>();
        spec.path("devices").path(0).path("containerEdits").path("deviceNodes").forEach(n -> out.add(n.path("path")
                .asText() + " " + n.path("type").asText() + " " + n.path("major").asInt() + ":" + n.path("minor").asInt()
                + " " + n.path("permissions").asText()));
        return out;
    }

    private List<String> files() throws Exception {
        try (Stream<Path> s = Files.list(cdi())) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private JsonNode query(String job) throws Exception {
        return JSON.readTree(root().onCommand(cmd(3, Code.QUERY, "{\"job\":\"" + job + "\"}")).get(0).text(0))
                .path("jobs").path(0);
    }

    @Test
    void aJobsSpec_followsStartReallocReleaseAndEnd() throws Exception {
        CdiSchema.assumePresent();
        daemon = TestDaemon.start(config());
        List<Frame> started = start("4711.3", "gpu=1");
        assertThat(started.get(0).code()).as(started.toString()).isEqualTo(Code.STATE.value());
        JsonNode s = spec("4711.3");
        assertThat(s.path("cdiVersion").asText()).isEqualTo("0.5.0");
        assertThat(s.path("kind").asText()).isEqualTo("rsmap.io/job");
        assertThat(s.path("devices").path(0).path("name").asText()).isEqualTo("4711.3");
        assertThat(nodes(s)).containsExactly("/dev/zero c 1:5 rw");
        assertThat(s.path("devices").path(0).path("containerEdits").path("env").toString())
                .isEqualTo("[\"SGE_HGR_gpu=0\"]");
        Path f = cdi().resolve("rsmapd-job-4711.3.json");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(f))).isEqualTo("rw-r--r--");
        assertThat(Files.getOwner(f).getName()).isEqualTo(System.getProperty("user.name")); // root's in CI
        assertThat(files()).containsExactly("rsmapd-job-4711.3.json"); // no temporary file left
        // The starter learns the name from JOB_ENTER's answer, after the grant's variables.
        Process p = new ProcessBuilder("sleep", "30").start();
        try {
            List<Frame> entered = DaemonSessions.as(daemon, "root", 0, p.pid(), new ArrayList<>())
                    .onCommand(cmd(4, Code.JOB_ENTER, "{\"job\":\"4711\",\"task\":\"3\"}"));
            assertThat(entered.get(0).args().subList(1, entered.get(0).args().size()).stream()
                    .map(b -> new String(b, java.nio.charset.StandardCharsets.UTF_8)).toList())
                    .containsExactly("SGE_HGR_gpu=0", "RSMAP_CDI_DEVICE=rsmap.io/job=4711.3");
            // in that line only, not in the STATE JSON (docs/protocol.md, JOB_ENTER)
            assertThat(JSON.readTree(entered.get(0).text(0)).path("env").has("RSMAP_CDI_DEVICE")).isFalse();
        } finally {
            p.destroyForcibly().waitFor();
        }
        assertThat(query("4711.3").path("env").has("RSMAP_CDI_DEVICE")).as("not part of the grant's view").isFalse();

        // A realloc that adds: the spec has both cards when the ALLOC is answered.
        List<Frame> grow = root().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"4711\",\"task\":\"3\",\"add\":\"gpu=1\"}"));
        assertThat(grow.get(0).code()).as(grow.toString()).isEqualTo(Code.ALLOC.value());
        assertThat(nodes(spec("4711.3"))).containsExactly("/dev/zero c 1:5 rw", "/dev/full c 1:7 r");
        assertThat(spec("4711.3").path("devices").path(0).path("containerEdits").path("env").toString())
                .isEqualTo("[\"SGE_HGR_gpu=0 1\"]");
        // Taken away: still in the spec (and the policy) until the RELEASE, which rewrites it before its answer.
        root().onCommand(cmd(6, Code.REALLOC, "{\"job\":\"4711\",\"task\":\"3\",\"ids\":{\"node01\":{\"gpu\":[\"1\"]}}}"));
        assertThat(nodes(spec("4711.3"))).containsExactly("/dev/zero c 1:5 rw", "/dev/full c 1:7 r");
        List<Frame> rel = root().onCommand(cmd(7, Code.RELEASE, "{\"job\":\"4711\",\"task\":\"3\"}"));
        assertThat(rel.get(0).code()).as(rel.toString()).isEqualTo(Code.STATE.value());
        assertThat(nodes(spec("4711.3"))).containsExactly("/dev/zero c 1:5 rw");

        assertThat(root().onCommand(cmd(8, Code.JOB_END, "{\"job\":\"4711\",\"task\":\"3\"}")).get(0))
                .isEqualTo(Session.ok(8));
        assertThat(files()).isEmpty();
    }

    @Test
    void aJobWithoutDevices_hasNoSpec_untilAGrowGivesItACard() throws Exception {
        daemon = TestDaemon.start(config());
        start("8", "nic=1");
        assertThat(Files.exists(cdi()) ? files() : List.of()).isEmpty();
        List<Frame> grow = root().onCommand(cmd(5, Code.REALLOC, "{\"job\":\"8\",\"add\":\"gpu=1\"}"));
        assertThat(grow.get(0).code()).as(grow.toString()).isEqualTo(Code.ALLOC.value());
        assertThat(files()).containsExactly("rsmapd-job-8.json");
    }

    @Test
    void startUp_removesRsmapdsSpecsOfGoneJobs_rewritesHeldOnes_andLeavesOtherFiles() throws Exception {
        Config config = config();
        daemon = TestDaemon.start(config);
        start("9", "gpu=1");
        daemon.close();
        Files.delete(cdi().resolve("rsmapd-job-9.json")); // as if killed before the write
        Files.writeString(cdi().resolve("rsmapd-job-77.json"), "{}"); // as if killed before the removal
        Files.writeString(cdi().resolve("nvidia.json"), "{}"); // another tool's
        Files.writeString(cdi().resolve("rsmap-static-gpu.json"), "{}"); // not rsmapd's prefix either
        Files.writeString(cdi().resolve(".rsmapd-job-78.json.tmp"), "{"); // killed while writing
        daemon = TestDaemon.start(config);
        assertThat(files()).containsExactly("nvidia.json", "rsmap-static-gpu.json", "rsmapd-job-9.json");
        assertThat(nodes(spec("9"))).containsExactly("/dev/zero c 1:5 rw");
        // Reconciliation too: a held job's spec removed by hand is written again, a stray one goes.
        Files.delete(cdi().resolve("rsmapd-job-9.json"));
        Files.writeString(cdi().resolve("rsmapd-job-79.json"), "{}");
        daemon.reconcile();
        assertThat(files()).containsExactly("nvidia.json", "rsmap-static-gpu.json", "rsmapd-job-9.json");
    }

    @Test
    void cdiRequired_aSpecThatCannotBeWritten_failsTheStartClosed_namingCdiDir() throws Exception {
        Files.writeString(tmp.resolve("not-a-dir"), "");
        daemon = TestDaemon.start(config("cdi = required", "cdi_dir = not-a-dir"));
        List<Frame> r = start("10", "gpu=1");
        assertThat(r.get(0).code()).isEqualTo(Code.ERROR.value());
        assertThat(r.get(0).text(0)).contains("job 10: cannot write its CDI spec").contains("cdi_dir "
                + tmp.resolve("not-a-dir")).contains("cdi = required");
        assertThat(r.get(0).text(1)).isEqualTo("unavailable"); // the prolog reschedules
        assertThat(daemon.jobs()).isEmpty();
        assertThat(start("11", "gpu=2").get(0).code()).as("nothing left held").isEqualTo(Code.ERROR.value());
    }

    @Test
    void cdiOptional_aSpecThatCannotBeWritten_isAWarning_andTheJobStarts() throws Exception {
        Files.writeString(tmp.resolve("not-a-dir"), "");
        daemon = TestDaemon.start(config("cdi_dir = not-a-dir"));
        assertThat(start("12", "gpu=1").get(0).code()).isEqualTo(Code.STATE.value());
        assertThat(daemon.log()).anyMatch(l -> l.contains("job 12: cannot write its CDI spec"));
    }

    @Test
    void aGpuMapBuiltFromNvml_itsSpecCarriesCudaVisibleDevices() throws Exception {
        CdiSchema.assumePresent();
        GpuStub.use(tmp.resolve("nvml.json"), GpuStub.cards(2));
        Files.createDirectories(tmp.resolve("dev"));
        for (int i = 0; i < 2; i++) { // the cards' nodes: links to real character devices
            Files.createSymbolicLink(tmp.resolve("dev/nvidia" + i), Path.of(i == 0 ? "/dev/zero" : "/dev/full"));
        }
        Config c = TestDaemon.config(tmp.resolve("g"), "NONE", "nvml_library = " + GpuStub.LIBRARY, "gpu_map = gpu",
                "gpu_dev_dir = " + tmp.resolve("dev"), "reconcile_interval = 0");
        GpuStub.declareAll(c.complexes());
        daemon = TestDaemon.start(c);
        assertThat(start("14", "gpu=1").get(0).code()).isEqualTo(Code.STATE.value());
        Path f = tmp.resolve("g/cdi/rsmapd-job-14.json");
        CdiSchema.assertValid(List.of(f));
        JsonNode edits = JSON.readTree(f.toFile()).path("devices").path(0).path("containerEdits");
        assertThat(edits.path("env").toString()).isEqualTo("[\"SGE_HGR_gpu=0\",\"CUDA_VISIBLE_DEVICES=" + GpuStub.uuid(0)
                + "\"]");
        assertThat(edits.path("deviceNodes").path(0).path("path").asText()).isEqualTo(tmp.resolve("dev/nvidia0").toString());
        assertThat(edits.path("deviceNodes").path(0).path("minor").asInt()).isEqualTo(5); // the link's device
    }

    @Test
    void cdiOff_writesNothing_andSetsNoVariable() throws Exception {
        daemon = TestDaemon.start(config("cdi = off"));
        start("13", "gpu=1");
        List<Frame> entered = DaemonSessions.as(daemon, "root", 0, ProcessHandle.current().pid(), new ArrayList<>())
                .onCommand(cmd(4, Code.JOB_ENTER, "{\"job\":\"13\"}"));
        assertThat(entered.get(0).args()).hasSize(2); // the JSON and SGE_HGR_gpu only
        assertThat(cdi()).doesNotExist();
    }

    /**
     * A spec that cannot be rewritten after a RELEASE goes rather than naming the card given back (which the
     * next job may get): fails closed. Reconciliation writes it again once it can.
     */
    @Test
    void aRewriteThatFails_afterARelease_removesTheWiderSpec() throws Exception {
        daemon = TestDaemon.start(config());
        start("15", "gpu=2");
        assertThat(nodes(spec("15"))).containsExactly("/dev/zero c 1:5 rw", "/dev/full c 1:7 r");
        root().onCommand(cmd(6, Code.REALLOC, "{\"job\":\"15\",\"ids\":{\"node01\":{\"gpu\":[\"1\"]}}}"));
        Path blocker = Files.createDirectories(cdi().resolve(".rsmapd-job-15.json.tmp").resolve("x")); // not removable
        List<Frame> rel = root().onCommand(cmd(7, Code.RELEASE, "{\"job\":\"15\"}"));
        assertThat(rel.get(0).code()).as(rel.toString()).isEqualTo(Code.STATE.value());
        assertThat(cdi().resolve("rsmapd-job-15.json")).as("no spec naming /dev/full any more").doesNotExist();
        assertThat(daemon.log()).anyMatch(l -> l.contains("job 15: cannot write its CDI spec"));
        Files.delete(blocker);
        Files.delete(blocker.getParent());
        daemon.reconcile();
        assertThat(nodes(spec("15"))).containsExactly("/dev/zero c 1:5 rw");
    }

    /**
     * The mode is set on the file written, never through a link put in its place (a writer of a careless
     * cdi_dir swapping the temporary file): the link's target keeps its mode, and no spec is written.
     */
    @Test
    void aTemporaryFileSwappedForALink_neverChangesTheLinksTarget() throws Exception {
        Path victim = Files.writeString(tmp.resolve("victim"), "secret");
        Files.setPosixFilePermissions(victim, PosixFilePermissions.fromString("rw-------"));
        Path swapped = cdi().resolve(".rsmapd-job-16.json.tmp");
        daemon = TestDaemon.start(config(), op -> {
            if (op.equals("permissions")) {
                try {
                    Files.delete(swapped);
                    Files.createSymbolicLink(swapped, victim);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        });
        assertThat(start("16", "gpu=1").get(0).code()).as("cdi = optional: the job starts").isEqualTo(Code.STATE.value());
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(victim))).isEqualTo("rw-------");
        assertThat(Files.readString(victim)).isEqualTo("secret");
        assertThat(cdi().resolve("rsmapd-job-16.json")).doesNotExist();
        assertThat(daemon.log()).anyMatch(l -> l.contains("job 16: cannot write its CDI spec"));
    }

    /** Turned off: the specs an earlier run wrote go at the next start, since nothing keeps them in step. */
    @Test
    void cdiTurnedOff_theSpecsAnEarlierRunWroteGoAtStart_andNoOtherFile() throws Exception {
        Config on = config();
        daemon = TestDaemon.start(on);
        start("17", "gpu=1");
        daemon.close();
        Files.writeString(cdi().resolve("nvidia.json"), "{}"); // another tool's
        assertThat(files()).containsExactly("nvidia.json", "rsmapd-job-17.json");
        Path conf = tmp.resolve("rsmapd.conf");
        Files.writeString(conf, Files.readString(conf) + "cdi = off\n"); // the admin's change, then a restart
        daemon = TestDaemon.start(Config.parse(Files.readString(conf), conf, "node01"));
        assertThat(files()).containsExactly("nvidia.json");
        assertThat(daemon.jobs()).as("the job still holds its grant").isNotEmpty();
    }

    /** A reconciliation that cannot read execd's spool releases nothing, and still brings the specs in step. */
    @Test
    void aReconciliationSkippedForAnUnreadableSpool_stillWritesAHeldJobsSpec() throws Exception {
        Path spool = Files.createDirectories(tmp.resolve("spool").resolve("active_jobs"));
        daemon = TestDaemon.start(config("execd_spool = " + spool.getParent()));
        Files.createDirectories(spool.resolve("18.1"));
        start("18", "gpu=1");
        Files.delete(cdi().resolve("rsmapd-job-18.json")); // removed by hand
        Files.delete(spool.resolve("18.1"));
        Files.delete(spool); // execd's spool unreadable now: reconciliation releases nothing
        daemon.reconcile();
        assertThat(daemon.log()).anyMatch(l -> l.contains("reconciliation skipped"));
        assertThat(daemon.jobs()).isNotEmpty();
        assertThat(files()).containsExactly("rsmapd-job-18.json");
    }

    /**
     * docs/containers.md: every reconciliation writes a held job's spec where it is out of date - also one
     * edited by hand; a FIFO or a link under a spec's name is removed unread, never waited on or followed.
     */
    @Test
    void reconciliation_rewritesASpecEditedByHand_andRemovesAFifoOrLinkUnread() throws Exception {
        Config config = config();
        daemon = TestDaemon.start(config);
        start("19", "gpu=1");
        start("20", "gpu=1");
        String good = Files.readString(cdi().resolve("rsmapd-job-19.json"));
        Files.writeString(cdi().resolve("rsmapd-job-19.json"), good.replace("/dev/zero", "/dev/full"));
        daemon.reconcile();
        assertThat(Files.readString(cdi().resolve("rsmapd-job-19.json"))).isEqualTo(good);
        daemon.close();
        Files.delete(cdi().resolve("rsmapd-job-19.json"));
        Files.delete(cdi().resolve("rsmapd-job-20.json"));
        assertThat(new ProcessBuilder("mkfifo", cdi().resolve("rsmapd-job-19.json").toString()).start().waitFor()).isZero();
        Files.createSymbolicLink(cdi().resolve("rsmapd-job-20.json"), tmp.resolve("elsewhere"));
        daemon = TestDaemon.start(config); // would wait on the FIFO for ever, under the lock, if it read it
        assertThat(Files.isRegularFile(cdi().resolve("rsmapd-job-19.json"), java.nio.file.LinkOption.NOFOLLOW_LINKS)).isTrue();
        assertThat(Files.isRegularFile(cdi().resolve("rsmapd-job-20.json"), java.nio.file.LinkOption.NOFOLLOW_LINKS)).isTrue();
        assertThat(tmp.resolve("elsewhere")).doesNotExist();
        assertThat(nodes(spec("19"))).hasSize(1);
    }
}
