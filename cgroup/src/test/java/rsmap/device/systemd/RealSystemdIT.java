// The systemd backend against a real systemd 252, booted as PID 1 of new namespaces by
// src/test/resources/systemd-ns/boot.sh ("Tests that use real components"): a real closed policy
// on a real transient scope shows up in the scope's v1 devices cgroup and is enforced, and remove() ends
// the scope; an update widens and narrows it for the task running in the scope. Opt-in
// (RSMAP_REAL_SYSTEMD=1): it boots an init system, needs root, the cgroup v1 devices controller and the
// name=systemd hierarchy.
package rsmap.device.systemd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import rsmap.device.DevicePolicy;
import rsmap.device.FakeDevices;

class RealSystemdIT {
    static final String ENV = "RSMAP_REAL_SYSTEMD";
    static final Path CGROUPS = Path.of("/sys/fs/cgroup");
    /** The cgroup (in every hierarchy) the namespace's systemd runs and makes its units' cgroups in. */
    static final String NAME = "rsmap-nsd-" + ProcessHandle.current().pid();

    static Path bootScript;
    static Path nodes;
    /** Host PID of the namespace's systemd; 0 until booted. */
    static long init;

    @BeforeAll
    static void boot() throws Exception {
        boolean wanted = "1".equals(System.getenv(ENV));
        if (!wanted) {
            String why = ENV + "=1 not set: this test boots a real systemd as PID 1 of new namespaces"
                    + " (systemd-ns/boot.sh); set it to run it (root, cgroup v1 devices, /lib/systemd/systemd)";
            System.out.println("RealSystemdIT skipped: " + why);
            assumeTrue(false, why);
        }
        FakeDevices.requireRoot("boots systemd in new namespaces and reads its devices cgroups");
        bootScript = Path.of(RealSystemdIT.class.getResource("/systemd-ns/boot.sh").toURI());
        // fake GPU nodes: under /dev, since systemd refuses DeviceAllow= paths elsewhere ("DeviceAllow=
        // requires device node or pattern"); the namespace shares the host's /dev
        nodes = Files.createDirectory(Path.of("/dev", NAME));
        try {
            FakeDevices.node(nodes, "gpu0", 195, 0);
            FakeDevices.node(nodes, "gpu7", 195, 7);
            Run r = run(60, "sh", bootScript.toString(), "start", NAME);
            assertThat(r.code).as("boot.sh start: %s", r.out).isZero();
            init = Long.parseLong(r.out.strip().lines().reduce((a, b) -> b).orElseThrow());
        } catch (Throwable t) {
            shutdown();
            throw t;
        }
    }

    @AfterAll
    static void shutdown() throws Exception {
        if (bootScript == null) {
            return;
        }
        try {
            Run r = run(60, "sh", bootScript.toString(), "stop", NAME, init > 0 ? Long.toString(init) : "");
            assertThat(r.code).as("boot.sh stop: %s", r.out).isZero();
            try (Stream<Path> hierarchies = Files.list(CGROUPS)) {
                assertThat(hierarchies.map(h -> h.resolve(NAME)).filter(Files::exists)).as("cgroups left").isEmpty();
            }
        } finally {
            init = 0;
            if (nodes != null) {
                try (Stream<Path> files = Files.list(nodes)) {
                    for (Path p : files.toList()) {
                        Files.deleteIfExists(p);
                    }
                }
                Files.deleteIfExists(nodes);
            }
        }
    }

    @Test
    void apply_realScope_devicesCgroupListsGrantedAndDeniesTheRest_removeEndsIt() throws Exception {
        String job = "real" + ProcessHandle.current().pid();
        String scope = "rsmap-" + job + ".scope";
        Path gpu0 = nodes.resolve("gpu0");
        Path gpu7 = nodes.resolve("gpu7");
        String granted = "gpu=1(g[devices=/dev/null:rw;" + gpu0 + ":rw])";
        assertThat(DevicePolicy.of(FakeDevices.instances(granted)).missing()).isEmpty();

        // A job process inside the PID namespace: prints its PID there, waits, then tries the devices.
        String probe = "echo $$; read go; for d in " + gpu0 + " " + gpu7 + "; do cat $d >/dev/null 2>/tmp/err;"
                + " echo \"$d $(cat /tmp/err)\"; done; echo done; exec sleep 300";
        Process job1 = inNamespace("sh", "-c", probe);
        // The backend, in a JVM inside the namespaces (see RealSystemdClient for why it cannot be this one)
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // Only the PID namespace: in the mount namespace /tmp is a private tmpfs, which would hide a test
        // classpath under /tmp (CI clones anywhere); the socket is reached through /proc/<init>/root.
        Process client = inPidNamespace(java, "-Xmx64m", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), RealSystemdClient.class.getName(),
                "unix:path=/proc/" + init + "/root/run/systemd/private");
        try {
            BufferedReader out = reader(job1);
            long nsPid = Long.parseLong(out.readLine().strip());
            BufferedReader answers = reader(client);
            assertThat(answers.readLine()).isEqualTo("ready");
            assertThat(ask(client, answers, "availability")).startsWith("ok");

            assertThat(ask(client, answers, "apply " + job + " " + nsPid + " " + granted)).isEqualTo("ok " + scope);

            Path scopeDir = devicesCgroup(scope);
            List<String> list = Files.readAllLines(scopeDir.resolve("devices.list"));
            // DevicePolicy=closed adds systemd's own pseudo devices (c 1:3 rwm for /dev/null among them,
            // where our rw merges in), its c 0:0 / b 0:0 placeholders and c 136:* rw for the ptys
            assertThat(list).contains("c 195:0 rw").anyMatch(l -> l.startsWith("c 1:3 rw"))
                    .noneMatch(l -> l.startsWith("a ") || l.startsWith("c 195:7") || l.startsWith("c 195:*"));
            // the job's process is in that scope (it was named by its PID in the namespace)
            long hostPid = job1.descendants().filter(p -> p.info().command().orElse("").endsWith("sh"))
                    .mapToLong(ProcessHandle::pid).findFirst().orElseThrow();
            assertThat(Files.readAllLines(scopeDir.resolve("cgroup.procs"))).contains(Long.toString(hostPid));

            // enforced: the granted node opens as far as a missing driver lets it, the other one is denied
            send(job1, "go");
            List<String> seen = new ArrayList<>();
            for (String l = out.readLine(); l != null && !l.equals("done"); l = out.readLine()) {
                seen.add(l);
            }
            assertThat(seen).hasSize(2);
            assertThat(seen.get(0)).startsWith(gpu0 + " ").contains("No such device or address");
            assertThat(seen.get(1)).startsWith(gpu7 + " ").contains("Operation not permitted");

            assertThat(ask(client, answers, "remove " + job)).isEqualTo("ok ");

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (Files.exists(scopeDir) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(scopeDir).as("devices cgroup of the stopped scope").doesNotExist();
            assertThat(job1.waitFor(10, TimeUnit.SECONDS)).as("the scope's process ends with the scope").isTrue();
        } finally {
            for (Process p : List.of(client, job1)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    /** The JVM driving SystemdBackend inside the namespace (see RealSystemdClient), answering "ready". */
    static Process client() throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return inPidNamespace(java, "-Xmx64m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                RealSystemdClient.class.getName(), "unix:path=/proc/" + init + "/root/run/systemd/private");
    }

    /** A process in the namespace that prints its PID there, then sleeps; its host PID is the nsenter child's. */
    static Process sleeper() throws IOException {
        return inNamespace("sh", "-c", "echo $$; exec sleep 300");
    }

    static long hostPid(Process viaNsenter) {
        return viaNsenter.descendants().mapToLong(ProcessHandle::pid).findFirst().orElseThrow();
    }

    @Test
    void apply_secondTaskOfTheJob_joinsTheRealScope() throws Exception {
        // the Slurm plugin enters each task; the second must join the job's scope, not fail
        String job = "join" + ProcessHandle.current().pid();
        String scope = "rsmap-" + job + ".scope";
        String granted = "gpu=1(g[devices=/dev/null:rw;" + nodes.resolve("gpu0") + ":rw])";
        Process task1 = sleeper();
        Process task2 = sleeper();
        Process client = client();
        try {
            long ns1 = Long.parseLong(reader(task1).readLine().strip());
            long ns2 = Long.parseLong(reader(task2).readLine().strip());
            BufferedReader answers = reader(client);
            assertThat(answers.readLine()).isEqualTo("ready");
            assertThat(ask(client, answers, "apply " + job + " " + ns1 + " " + granted)).isEqualTo("ok " + scope);
            assertThat(ask(client, answers, "apply " + job + " " + ns2 + " " + granted)).isEqualTo("ok " + scope);

            Path scopeDir = devicesCgroup(scope);
            assertThat(Files.readAllLines(scopeDir.resolve("cgroup.procs")))
                    .contains(Long.toString(hostPid(task1)), Long.toString(hostPid(task2)));
            assertThat(Files.readAllLines(scopeDir.resolve("devices.list"))).contains("c 195:0 rw")
                    .noneMatch(l -> l.startsWith("a ") || l.startsWith("c 195:7"));

            assertThat(ask(client, answers, "remove " + job)).isEqualTo("ok ");
            assertThat(task1.waitFor(10, TimeUnit.SECONDS)).as("task 1 ends with the scope").isTrue();
            assertThat(task2.waitFor(10, TimeUnit.SECONDS)).as("task 2 ends with the scope").isTrue();
        } finally {
            for (Process p : List.of(client, task1, task2)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    @Test
    void apply_jobHoldingNothing_reachesOnlyTheBasics() throws Exception {
        // the closed policy of a job granted nothing here (only /dev/null, zero, full,
        // random, urandom)
        String job = "none" + ProcessHandle.current().pid();
        String scope = "rsmap-" + job + ".scope";
        Path gpu0 = nodes.resolve("gpu0");
        String probe = "echo $$; read go; for d in /dev/null /dev/urandom " + gpu0 + "; do head -c1 $d >/dev/null"
                + " 2>/tmp/err; echo \"$d $? $(cat /tmp/err)\"; done; echo done; exec sleep 300";
        Process task = inNamespace("sh", "-c", probe);
        Process client = client();
        try {
            BufferedReader out = reader(task);
            long nsPid = Long.parseLong(out.readLine().strip());
            BufferedReader answers = reader(client);
            assertThat(answers.readLine()).isEqualTo("ready");
            assertThat(ask(client, answers, "apply-basics " + job + " " + nsPid)).isEqualTo("ok " + scope);

            Path scopeDir = devicesCgroup(scope);
            assertThat(Files.readAllLines(scopeDir.resolve("devices.list"))).anyMatch(l -> l.startsWith("c 1:3 rw"))
                    .noneMatch(l -> l.startsWith("a ") || l.startsWith("c 195:"));
            send(task, "go");
            List<String> seen = new ArrayList<>();
            for (String l = out.readLine(); l != null && !l.equals("done"); l = out.readLine()) {
                seen.add(l);
            }
            assertThat(seen).hasSize(3);
            assertThat(seen.get(0)).isEqualTo("/dev/null 0 ");
            assertThat(seen.get(1)).isEqualTo("/dev/urandom 0 ");
            assertThat(seen.get(2)).startsWith(gpu0 + " 1 ").contains("Operation not permitted");

            assertThat(ask(client, answers, "remove " + job)).isEqualTo("ok ");
        } finally {
            for (Process p : List.of(client, task)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    /**
     * Open Cluster Scheduler's own scope of the job (enable_systemd): the entering process is found there
     * (GetUnitByPID) and stays there, under the policy set on that scope. Job end never widens: a process the
     * job left there (execd's scope lives on until its last process exits) is listed by GetUnitProcesses, the
     * scope is closed off every device for it rather than reset to DevicePolicy=auto, and once it has exited
     * the list is empty and the reset harmless.
     */
    @Test
    void execdScope_keepsTheJob_andAProcessLeftThere_isListedAndClosedOffEveryDevice_untilItExits() throws Exception {
        String job = ProcessHandle.current().pid() + "7";
        String scope = "ocs6444." + job + ".scope";
        Path gpu0 = nodes.resolve("gpu0");
        String granted = "gpu=1(g[devices=/dev/null:rw;" + gpu0 + ":rw])";
        // execd's scope, as the shepherd makes it for the job: systemd-run --scope runs the command in it
        Process left = inNamespace("systemd-run", "--quiet", "--scope", "--unit=" + scope, "sh", "-c",
                cardLoop(gpu0));
        Process client = client();
        try {
            BufferedReader out = reader(left);
            long nsPid = Long.parseLong(out.readLine().strip());
            BufferedReader answers = reader(client);
            assertThat(answers.readLine()).isEqualTo("ready");
            assertThat(ask(client, answers, "apply " + job + " " + nsPid + " " + granted)).isEqualTo("ok " + scope);
            Path scopeDir = devicesCgroup(scope);
            assertThat(Files.readAllLines(scopeDir.resolve("devices.list"))).contains("c 195:0 rw");
            assertThat(Files.readAllLines(scopeDir.resolve("cgroup.procs"))).as("not moved out of execd's scope")
                    .contains(Long.toString(hostPid(left)));
            assertThat(find(CGROUPS.resolve("devices").resolve(NAME), "rsmap-" + job + ".scope")).isEmpty();
            assertThat(openCard(left, out)).contains("No such device or address"); // reached: the driver is missing

            // the job ended, this process stayed: listed, and closed off every device
            assertThat(ask(client, answers, "processes " + job)).isEqualTo("ok " + nsPid);
            assertThat(ask(client, answers, "close " + job)).isEqualTo("ok " + scope);
            assertThat(Files.readAllLines(scopeDir.resolve("devices.list"))).anyMatch(l -> l.startsWith("c 1:3 rw"))
                    .noneMatch(l -> l.startsWith("a ") || l.startsWith("c 195:"));
            assertThat(openCard(left, out)).contains("Operation not permitted");

            left.getOutputStream().close(); // it exits: systemd collects the scope
            assertThat(left.waitFor(10, TimeUnit.SECONDS)).isTrue();
            String listed = "";
            for (int i = 0; i < 200 && !(listed = ask(client, answers, "processes " + job)).equals("ok "); i++) {
                Thread.sleep(50);
            }
            assertThat(listed).as("none once its last process exited").isEqualTo("ok ");
            assertThat(ask(client, answers, "remove " + job)).isEqualTo("ok ");
        } finally {
            for (Process p : List.of(client, left)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    @Test
    void update_realScope_widensThenNarrows_aRunningTaskFollows() throws Exception {
        // the job's process stays in its scope while SetUnitProperties widens and narrows its policy
        String job = "upd" + ProcessHandle.current().pid();
        String scope = "rsmap-" + job + ".scope";
        Path gpu0 = nodes.resolve("gpu0");
        Path gpu7 = nodes.resolve("gpu7");
        String one = "gpu=1(g[devices=/dev/null:rw;" + gpu0 + ":rw])";
        String both = "gpu=1(g[devices=/dev/null:rw;" + gpu0 + ":rw;" + gpu7 + ":rw])";
        Process task = inNamespace("sh", "-c", cardLoop(gpu7));
        Process client = client();
        try {
            BufferedReader out = reader(task);
            long nsPid = Long.parseLong(out.readLine().strip());
            BufferedReader answers = reader(client);
            assertThat(answers.readLine()).isEqualTo("ready");
            assertThat(ask(client, answers, "apply " + job + " " + nsPid + " " + one)).isEqualTo("ok " + scope);
            Path scopeDir = devicesCgroup(scope);
            assertThat(openCard(task, out)).as(() -> afterFailure(task, out, scopeDir)).contains("Operation not permitted");

            assertThat(ask(client, answers, "update " + job + " " + both)).isEqualTo("ok " + scope);
            assertThat(Files.readAllLines(scopeDir.resolve("devices.list"))).contains("c 195:0 rw", "c 195:7 rw")
                    .noneMatch(l -> l.startsWith("a "));
            assertThat(openCard(task, out)).contains("No such device or address").doesNotContain("not permitted");

            assertThat(ask(client, answers, "update " + job + " " + one)).isEqualTo("ok " + scope);
            assertThat(Files.readAllLines(scopeDir.resolve("devices.list"))).contains("c 195:0 rw")
                    .noneMatch(l -> l.startsWith("a ") || l.startsWith("c 195:7"));
            assertThat(openCard(task, out)).as(() -> afterFailure(task, out, scopeDir)).contains("Operation not permitted");
            assertThat(Files.readAllLines(scopeDir.resolve("cgroup.procs"))).as("still in its scope")
                    .contains(Long.toString(hostPid(task)));

            assertThat(ask(client, answers, "remove " + job)).isEqualTo("ok ");
            assertThat(task.waitFor(10, TimeUnit.SECONDS)).as("the task ends with the scope").isTrue();
        } finally {
            for (Process p : List.of(client, task)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    /** A task's script: prints its PID, then per line read opens {@code card} and answers cat's error and status. */
    static String cardLoop(Path card) {
        return "echo $$; while read go; do cat " + card + " 2>&1 >/dev/null; echo \"exit=$?\"; done";
    }

    /** The devices cgroup systemd made for {@code scope} under the test's systemd. */
    static Path devicesCgroup(String scope) throws IOException {
        return find(CGROUPS.resolve("devices").resolve(NAME), scope)
                .orElseThrow(() -> new AssertionError("no devices cgroup " + scope + " under " + NAME));
    }

    /**
     * What a failed assertion on a task's open says beside it (asked only then): the scope's devices list
     * and the task's devices cgroup as they are now, and the same open again half a second later, which tells
     * a policy applied late from one that stayed wider (CI saw a narrowed list and an open that passed once).
     */
    static String afterFailure(Process task, BufferedReader out, Path scopeDir) {
        StringBuilder b = new StringBuilder("now: ");
        try {
            b.append("devices.list ").append(Files.readAllLines(scopeDir.resolve("devices.list")));
            long pid = hostPid(task);
            for (String l : Files.readAllLines(Path.of("/proc", Long.toString(pid), "cgroup"))) {
                if (l.contains(":devices:")) {
                    b.append("; task ").append(pid).append(" in ").append(l);
                }
            }
            Thread.sleep(500);
            b.append("; 500 ms later the open gives ").append(openCard(task, out));
        } catch (IOException | RuntimeException e) {
            b.append("; cannot tell more: ").append(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return b.toString();
    }

    /** What a task reading "go" lines gets opening its card: cat's error, if any, and its exit status. */
    static String openCard(Process task, BufferedReader out) throws IOException {
        send(task, "go");
        StringBuilder seen = new StringBuilder();
        for (String l = out.readLine(); l != null; l = out.readLine()) {
            seen.append(l);
            if (l.startsWith("exit=")) {
                return seen.toString();
            }
        }
        return seen.append("(task ended)").toString();
    }

    /** A command in the PID namespace of the test's systemd only (host mounts). */
    static Process inPidNamespace(String... command) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("nsenter", "-t", Long.toString(init), "-p", "--"));
        cmd.addAll(List.of(command));
        return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    /** A command in the mount and PID namespaces of the test's systemd. */
    static Process inNamespace(String... command) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("nsenter", "-t", Long.toString(init), "-m", "-p", "--"));
        cmd.addAll(List.of(command));
        return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    static BufferedReader reader(Process p) {
        return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    }

    static void send(Process p, String line) throws IOException {
        OutputStream in = p.getOutputStream();
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    static String ask(Process client, BufferedReader answers, String command) throws IOException {
        send(client, command);
        String answer = answers.readLine();
        assertThat(answer).as("answer to '%s'", command).isNotNull();
        return answer;
    }

    static Optional<Path> find(Path root, String dirName) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(p -> p.getFileName().toString().equals(dirName) && Files.isDirectory(p)).findFirst();
        }
    }

    record Run(int code, String out) {
    }

    static Run run(int seconds, String... command) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(command));
        cmd.removeIf(String::isEmpty);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new Run(-1, String.join(" ", cmd) + " timed out after " + seconds + " s");
        }
        return new Run(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }
}
