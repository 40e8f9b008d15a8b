// The cgroup v1 backend against the real devices controller: a child process under a job's policy opens
// /dev/null, reaches its granted fake GPU (ENXIO: no driver) and is denied the other one (EPERM), also
// as an update widens and narrows the policy of the running job.
package rsmap.device.v1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;
import rsmap.device.DeviceRule;
import rsmap.device.FakeDevices;
import rsmap.map.Instance;

class CgroupV1BackendIT {
    final CgroupV1Backend backend = new CgroupV1Backend(CgroupV1Backend.DEFAULT_ROOT);
    final String job = "test-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    Path dir;
    Path gpu0;
    Path gpu1;

    @BeforeEach
    void setUp() throws Exception {
        FakeDevices.requireRoot("the cgroup v1 devices controller");
        assertThat(backend.availability().available()).as(backend.availability().reason()).isTrue();
        dir = FakeDevices.tempDir();
        gpu0 = FakeDevices.node(dir, "nvidia0", 195, 0);
        gpu1 = FakeDevices.node(dir, "nvidia1", 195, 1);
    }

    @AfterEach
    void cleanUp() throws Exception {
        // Cleanup leaves no cgroup directory behind, even when a test fails.
        if (dir != null) {
            backend.remove(job);
            assertThat(backend.cgroupOf(job)).doesNotExist();
            for (Path p : List.of(gpu0, gpu1)) {
                Files.deleteIfExists(p);
            }
            Files.delete(dir);
        }
    }

    private List<Instance> host() throws Exception {
        return FakeDevices.instances("gpu=2(g0[devices=" + gpu0 + ":rw] g1[devices=" + gpu1 + ":rw])");
    }

    /** Runs {@code cat path} in a shell that first moves itself into the job's cgroup; returns stderr. */
    private String openInJob(Path path) throws Exception {
        Path procs = backend.cgroupOf(job).resolve("cgroup.procs");
        Process p = new ProcessBuilder("sh", "-c", "echo $$ > " + procs + " && exec cat " + path + " >/dev/null")
                .start();
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        return new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8) + "exit=" + p.exitValue();
    }

    @Test
    void apply_closedPolicy_grantsTheGrantedDeviceAndDeniesTheOther() throws Exception {
        backend.apply(job, DevicePolicy.of(host().subList(0, 1)));
        assertThat(openInJob(Path.of("/dev/null"))).isEqualTo("exit=0");
        assertThat(openInJob(gpu0)).contains("No such device or address"); // allowed: ENXIO from the driver-less node
        assertThat(openInJob(gpu1)).contains("Operation not permitted"); // denied by the policy: EPERM
        assertThat(Files.readString(backend.cgroupOf(job).resolve("devices.list")))
                .contains("c 195:0 rw").doesNotContain("c 195:1").doesNotContain("a *:* rwm");
    }

    @Test
    void apply_movesTheGivenProcessesIn_andRemoveMovesThemOut() throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "30").start();
        try {
            backend.apply(job, DevicePolicy.of(host()), sleeper.pid());
            assertThat(Files.readAllLines(backend.cgroupOf(job).resolve("cgroup.procs")))
                    .contains(Long.toString(sleeper.pid()));
            backend.remove(job);
            assertThat(backend.cgroupOf(job)).doesNotExist();
            assertThat(sleeper.isAlive()).isTrue();
        } finally {
            sleeper.destroyForcibly().waitFor();
        }
    }

    @Test
    void apply_openPolicy_createsNothing() throws Exception {
        backend.apply(job, DevicePolicy.OPEN);
        assertThat(backend.cgroupOf(job)).doesNotExist();
    }

    @Test
    void apply_failure_isAnError_andLeavesNothingBehind() throws Exception {
        assertThatThrownBy(() -> backend.apply(job, DevicePolicy.of(host()), 999_999_999L))
                .isInstanceOf(DevicePolicyException.class).hasMessageContaining("cannot apply");
        assertThat(backend.cgroupOf(job)).doesNotExist();
    }

    @Test
    void cgroupOf_unsafeJobName_isRefused() {
        assertThatThrownBy(() -> backend.cgroupOf("../etc")).isInstanceOf(DevicePolicyException.class);
        assertThatThrownBy(() -> backend.cgroupOf("..")).isInstanceOf(DevicePolicyException.class);
    }

    @Test
    void remove_unknownJob_isFine() throws Exception {
        Path rsmap = CgroupV1Backend.DEFAULT_ROOT.resolve("rsmap");
        List<String> before = tree(rsmap);
        backend.remove("never-applied");
        assertThat(backend.cgroupOf("never-applied")).doesNotExist();
        assertThat(tree(rsmap)).as("the tree is unchanged").isEqualTo(before);
    }

    /** The job cgroups under {@code dir}, and the processes in each. */
    private static List<String> tree(Path dir) throws Exception {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path d : s.filter(Files::isDirectory).sorted().toList()) {
                out.add(d.getFileName() + " " + Files.readAllLines(d.resolve("cgroup.procs")));
            }
        }
        return out;
    }

    private Process sleeper() throws Exception {
        return new ProcessBuilder("sleep", "60").start();
    }

    private List<String> procs() throws Exception {
        return Files.readAllLines(backend.cgroupOf(job).resolve("cgroup.procs"));
    }

    private List<String> devicesList() throws Exception {
        return Files.readAllLines(backend.cgroupOf(job).resolve("devices.list"));
    }

    // a later task of the job (the Slurm plugin enters each task) joins the job's cgroup.

    @Test
    void apply_secondTaskOfTheJob_joinsTheCgroup() throws Exception {
        Process task1 = sleeper();
        Process task2 = sleeper();
        try {
            backend.apply(job, DevicePolicy.of(host().subList(0, 1)), task1.pid());
            List<String> list = devicesList();
            backend.apply(job, DevicePolicy.of(host().subList(0, 1)), task2.pid());
            assertThat(procs()).contains(Long.toString(task1.pid()), Long.toString(task2.pid()));
            assertThat(devicesList()).isEqualTo(list).contains("c 195:0 rw").doesNotContain("c 195:1 rw");
        } finally {
            task1.destroyForcibly().waitFor();
            task2.destroyForcibly().waitFor();
        }
    }

    @Test
    void apply_secondTaskWithAnotherPolicy_listBecomesThatPolicy() throws Exception {
        backend.apply(job, DevicePolicy.of(host()));
        assertThat(devicesList()).contains("c 195:0 rw", "c 195:1 rw");
        backend.apply(job, DevicePolicy.of(FakeDevices.instances("gpu=1(g1[devices=" + gpu1 + ":r])")));
        assertThat(devicesList()).contains("c 195:1 r", "c 1:3 rw").noneMatch(l -> l.startsWith("c 195:0"))
                .doesNotContain("c 195:1 rw");
        assertThat(openInJob(gpu0)).contains("Operation not permitted");
    }

    @Test
    void apply_againWhileATaskRuns_neverDeniesWhatThePolicyKeeps() throws Exception {
        // A task opening /dev/null in a tight loop while the job's policy is applied again and again: writing
        // "a" to devices.deny first would empty the list for a moment and the open would fail with EPERM.
        DevicePolicy policy = DevicePolicy.of(host().subList(0, 1));
        backend.apply(job, policy);
        Path procsFile = backend.cgroupOf(job).resolve("cgroup.procs");
        Process task = new ProcessBuilder("sh", "-c", "echo $$ > " + procsFile + " && echo in && "
                + "while :; do : < /dev/null || { echo denied; exit 1; }; done").start();
        try {
            assertThat(new java.io.BufferedReader(new java.io.InputStreamReader(task.getInputStream())).readLine())
                    .isEqualTo("in");
            for (int i = 0; i < 300 && task.isAlive(); i++) {
                backend.apply(job, policy);
            }
            if (!task.isAlive()) {
                fail("the task was denied /dev/null: " + new String(task.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
            }
        } finally {
            task.destroyForcibly().waitFor();
        }
    }

    @Test
    void apply_secondTaskFails_firstStaysConfined() throws Exception {
        // removing the cgroup on a later task's failure would move the running task to the root cgroup,
        // where it reaches every device
        Process task1 = sleeper();
        try {
            backend.apply(job, DevicePolicy.of(host().subList(0, 1)), task1.pid());
            assertThatThrownBy(() -> backend.apply(job, DevicePolicy.of(host().subList(0, 1)), 999_999_999L))
                    .isInstanceOf(DevicePolicyException.class).hasMessageContaining("cannot apply");
            assertThat(procs()).contains(Long.toString(task1.pid()));
            assertThat(devicesList()).contains("c 195:0 rw").doesNotContain("a *:* rwm");
        } finally {
            task1.destroyForcibly().waitFor();
        }
    }

    @Test
    void apply_jobHoldingNothing_reachesOnlyTheBasics() throws Exception {
        // the starter enters a job granted nothing here under the closed policy
        backend.apply(job, FakeDevices.basicsOnly());
        assertThat(devicesList()).containsExactlyInAnyOrder("c 1:3 rw", "c 1:5 rw", "c 1:7 rw", "c 1:8 rw", "c 1:9 rw");
        assertThat(openInJob(Path.of("/dev/null"))).isEqualTo("exit=0");
        assertThat(openInJob(gpu0)).contains("Operation not permitted");
        assertThat(openInJob(Path.of("/dev/tty"))).contains("Operation not permitted");
    }

    @Test
    void apply_closedPolicyWithNoRules_deniesEverything() throws Exception {
        backend.apply(job, new DevicePolicy(true, List.of(), List.of("/dev/null")));
        assertThat(devicesList()).isEmpty();
    }

    // a running job's policy widens and narrows (dynamic reallocation).

    /**
     * A task already in the job's cgroup: for each path written to its stdin it opens the path and answers
     * with cat's error, if any, then {@code exit=<status>}.
     */
    private Process resident() throws Exception {
        Path procsFile = backend.cgroupOf(job).resolve("cgroup.procs");
        Process task = new ProcessBuilder("sh", "-c", "echo $$ > " + procsFile + " && echo in && "
                + "while read d; do cat \"$d\" 2>&1 >/dev/null; echo \"exit=$?\"; done").start();
        assertThat(reader(task).readLine()).isEqualTo("in");
        return task;
    }

    /** One reader per process, so no line read ahead is lost between calls. */
    private final Map<Process, BufferedReader> readers = new HashMap<>();

    private BufferedReader reader(Process p) {
        return readers.computeIfAbsent(p, q -> new BufferedReader(new InputStreamReader(q.getInputStream(),
                StandardCharsets.UTF_8)));
    }

    /** What the resident task gets opening {@code path}: cat's error and its exit status. */
    private String openIn(Process task, Path path) throws Exception {
        task.getOutputStream().write((path + "\n").getBytes(StandardCharsets.UTF_8));
        task.getOutputStream().flush();
        StringBuilder out = new StringBuilder();
        for (String l = reader(task).readLine(); l != null; l = reader(task).readLine()) {
            out.append(l);
            if (l.startsWith("exit=")) {
                return out.toString();
            }
        }
        return out.append("(task ended)").toString();
    }

    @Test
    void update_widenThenNarrow_aRunningTaskReachesTheDeviceOnlyWhileGranted() throws Exception {
        DevicePolicy one = DevicePolicy.of(host().subList(0, 1));
        DevicePolicy both = DevicePolicy.of(host());
        backend.apply(job, one);
        Process task = resident();
        try {
            assertThat(openIn(task, gpu1)).contains("Operation not permitted"); // EPERM: not granted
            backend.update(job, both);
            assertThat(openIn(task, gpu1)).contains("No such device or address").doesNotContain("not permitted");
            assertThat(openInJob(gpu1)).as("a process the job starts later").contains("No such device or address");
            assertThat(devicesList()).contains("c 195:0 rw", "c 195:1 rw");

            backend.update(job, one);
            assertThat(openIn(task, gpu1)).contains("Operation not permitted");
            assertThat(openInJob(gpu1)).contains("Operation not permitted");
            assertThat(openIn(task, gpu0)).as("kept throughout").contains("No such device or address");
            assertThat(openIn(task, Path.of("/dev/null"))).isEqualTo("exit=0");
            assertThat(devicesList()).containsExactlyInAnyOrderElementsOf(expectedList(one));
            assertThat(procs()).contains(Long.toString(task.pid()));
        } finally {
            task.destroyForcibly().waitFor();
        }
    }

    /** devices.list of a cgroup holding exactly {@code policy}. */
    private static List<String> expectedList(DevicePolicy policy) {
        return policy.rules().stream().map(DeviceRule::cgroupV1).toList();
    }

    @Test
    void update_modeNarrowed_onlyThatAccessIsTakenOff() throws Exception {
        backend.apply(job, DevicePolicy.of(host().subList(0, 1)));
        backend.update(job, DevicePolicy.of(FakeDevices.instances("gpu=1(g0[devices=" + gpu0 + ":r])")));
        assertThat(devicesList()).contains("c 195:0 r", "c 1:3 rw").doesNotContain("c 195:0 rw");
    }

    @Test
    void update_againAndAgainWhileATaskRuns_neverDeniesWhatBothPoliciesKeep() throws Exception {
        // widening and narrowing gpu1 while a task opens /dev/null and /dev/zero (in both policies) in a tight
        // loop: writing "a" to devices.deny first would deny them for a moment and the open would fail
        DevicePolicy one = DevicePolicy.of(host().subList(0, 1));
        DevicePolicy both = DevicePolicy.of(host());
        backend.apply(job, one);
        Path procsFile = backend.cgroupOf(job).resolve("cgroup.procs");
        Process task = new ProcessBuilder("sh", "-c", "echo $$ > " + procsFile + " && echo in && "
                + "while :; do : < /dev/null && : < /dev/zero || { echo denied; exit 1; }; done").start();
        try {
            assertThat(reader(task).readLine()).isEqualTo("in");
            for (int i = 0; i < 300 && task.isAlive(); i++) {
                backend.update(job, i % 2 == 0 ? both : one);
            }
            if (!task.isAlive()) {
                fail("the task was denied a device both policies grant: "
                        + new String(task.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
            }
        } finally {
            task.destroyForcibly().waitFor();
        }
    }

    @Test
    void update_toOpenAndBack_liftsEveryRestrictionThenClosesAgain() throws Exception {
        DevicePolicy one = DevicePolicy.of(host().subList(0, 1));
        backend.apply(job, one);
        Process task = resident();
        try {
            backend.update(job, DevicePolicy.OPEN);
            assertThat(devicesList()).containsExactly("a *:* rwm");
            assertThat(openIn(task, gpu1)).contains("No such device or address");
            assertThat(procs()).as("the cgroup keeps the job's processes").contains(Long.toString(task.pid()));

            backend.update(job, one);
            assertThat(devicesList()).containsExactlyInAnyOrderElementsOf(expectedList(one));
            assertThat(openIn(task, gpu1)).contains("Operation not permitted");
        } finally {
            task.destroyForcibly().waitFor();
        }
    }

    @Test
    void update_noPolicyApplied_isAnError_andCreatesNothing() throws Exception {
        assertThatThrownBy(() -> backend.update(job, DevicePolicy.of(host())))
                .isInstanceOf(DevicePolicyException.class).hasMessageContaining("has no device policy applied");
        assertThat(backend.cgroupOf(job)).doesNotExist();
        backend.apply(job, DevicePolicy.of(host()));
        backend.remove(job);
        assertThatThrownBy(() -> backend.update(job, DevicePolicy.OPEN))
                .as("after remove").isInstanceOf(DevicePolicyException.class).hasMessageContaining("has no device policy");
        assertThat(backend.cgroupOf(job)).doesNotExist();
    }

    @Test
    void update_openPolicyApplied_staysOpen_closingItIsRefused() throws Exception {
        // an open apply moved no process: a closed policy could not reach them all
        backend.apply(job, DevicePolicy.OPEN);
        backend.update(job, DevicePolicy.OPEN);
        assertThatThrownBy(() -> backend.update(job, DevicePolicy.of(host())))
                .isInstanceOf(DevicePolicyException.class).hasMessageContaining("open device policy");
        assertThat(backend.cgroupOf(job)).doesNotExist();
    }
}
