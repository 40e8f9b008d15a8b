// The .deb installed for real on this machine ("Tested for real in CI"): dpkg -i, rsmapd started
// with its unit's ExecStart and environment (no systemd here), jobs through the installed execd-stub and
// hooks as another user, the installed rsmap, an upgrade, dpkg -r and dpkg -P - and what each leaves.
package rsmap.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * One package's life, step by step (each step needs the ones before it). It changes the machine: it runs
 * under CI=true, with {@code -Ppackages} or with RSMAP_PACKAGE_TEST=1, as root, and ends with the package
 * purged. What stays by policy: the {@code rsmap} group (Debian policy 9.2.2: never removed, files may
 * still belong to it) and whatever the admin - here this test - wrote into /etc/rsmap itself.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PackageInstallIT {
    static final Path UNIT = Path.of("/usr/lib/systemd/system/rsmapd.service");
    static final Path CONF = Path.of("/etc/rsmap/rsmapd.conf");
    static final Path COMPLEXES = Path.of("/etc/rsmap/complexes");
    static final Path HOOK = Path.of("/usr/libexec/rsmap/rsmap-hook");
    static final Path STUB = Path.of("/usr/libexec/rsmap/execd-stub");
    static final Path SOCKET = Path.of("/run/rsmap/rsmapd.sock");
    static final Path JOURNAL_DIR = Path.of("/var/lib/rsmap");
    static final Path CDS = Path.of("/var/cache/rsmap/rsmapd.jsa");
    static final Path ENABLED = Path.of("/etc/systemd/system/multi-user.target.wants/rsmapd.service");
    static final String MARK = "# written by rsmap's PackageInstallIT: an admin's table stands here\n";
    /** Where a package's traces could be: every path below these whose name says rsmap is compared. */
    static final List<Path> ROOTS = List.of(Path.of("/etc"), Path.of("/usr"), Path.of("/var"), Path.of("/run"),
            Path.of("/opt"));

    Path deb;
    /** The upgrade of step 4. */
    Path newer;
    Path shared;
    /** The fake cards' device files. */
    final Path cards = Path.of("/dev", "rsmap-pkg-" + ProcessHandle.current().pid());
    Set<String> before;
    String adminConf;
    Process daemon;
    Path daemonLog;
    FileChannel lockFile;
    FileLock lock;

    @BeforeAll
    void onlyWhereAsked() throws Exception {
        boolean asked = Boolean.getBoolean("rsmap.packageTest") || "true".equals(System.getenv("CI"))
                || "1".equals(System.getenv("RSMAP_PACKAGE_TEST"));
        Assumptions.assumeTrue(asked, "installs and purges the package rsmap on this machine: runs under CI=true, "
                + "with mvn -Ppackages, or with RSMAP_PACKAGE_TEST=1");
        if (!Run.ok(List.of("id", "-u")).strip().equals("0")) {
            Packages.missing("dpkg -i needs root");
        }
        deb = Packages.deb();
        // one package test per machine at a time (dpkg has its own lock, but the steps span several calls)
        lockFile = FileChannel.open(Path.of("/tmp/.rsmap-package-test.lock"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
        lock = lockFile.lock();
        // what an earlier run that was killed may have left: the package, and this test's own table
        if (!dpkgStatus().isEmpty()) {
            Run.ok(List.of("dpkg", "--purge", "rsmap"));
        }
        if (Files.isRegularFile(COMPLEXES) && Files.readString(COMPLEXES).startsWith(MARK)) {
            Files.delete(COMPLEXES);
            deleteIfEmpty(COMPLEXES.getParent());
        }
        assertThat(COMPLEXES.getParent()).as("an /etc/rsmap of someone else's: this test would change it").doesNotExist();
        before = rsmapPaths();
        shared = Files.createTempDirectory("rsmap-pkg", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x"))); // the job's owner reaches its spool and tmpdir
    }

    @AfterAll
    void cleanUp() throws Exception {
        try {
            stopDaemon();
            if (deb != null && !dpkgStatus().isEmpty()) {
                Run.of(List.of("dpkg", "--purge", "rsmap"));
            }
            if (Files.isRegularFile(COMPLEXES) && Files.readString(COMPLEXES).startsWith(MARK)) {
                Files.delete(COMPLEXES);
                deleteIfEmpty(COMPLEXES.getParent());
            }
            if (shared != null) {
                deleteTree(shared);
                deleteTree(cards);
            }
        } finally {
            if (lock != null) {
                lock.release();
                lockFile.close();
            }
        }
    }

    // --- the steps --------------------------------------------------------------------------------

    @Test
    @Order(1)
    void install_laysDownEveryFile_theGroup_andTheSetGidHook() throws Exception {
        String out = Run.ok(List.of("dpkg", "--install", deb.toString()));
        assertThat(dpkgStatus()).as(out).isEqualTo("ii ");
        assertThat(Run.of(List.of("getent", "group", "rsmap")).code()).as("postinst made the group").isZero();
        assertThat(stat(HOOK)).isEqualTo("root:rsmap 2755");
        assertThat(Files.readSymbolicLink(HOOK.resolveSibling("rsmap-starter"))).isEqualTo(Path.of("rsmap-hook"));
        for (String f : Packages.lines(Run.ok(List.of("dpkg", "--listfiles", "rsmap")))) {
            assertThat(Path.of(f)).as("dpkg -L lists it").exists();
        }
        assertThat(stat(Path.of("/usr/sbin/rsmapd"))).isEqualTo("root:root 755");
        assertThat(stat(CONF)).isEqualTo("root:root 644");
        // nothing is running or enabled: the admin writes the complex table first
        assertThat(JOURNAL_DIR).doesNotExist();
        assertThat(CDS).as("postinst's rsmapd --train-cds").isRegularFile();
        Run verify = Run.of(List.of("systemd-analyze", "verify", UNIT.toString()));
        assertThat(verify.output()).as("systemd-analyze verify").doesNotContain("rsmapd.service:");
        Run man = Run.of(List.of("man", "--warnings", "-l", "/usr/share/man/man8/rsmapd.8.gz"), "MANPAGER=cat", "LC_ALL=C.UTF-8");
        assertThat(man.output().replaceAll("\\s+", " ")).contains("rsmapd - grants resource-map instances")
                .doesNotContain("warning");
    }

    @Test
    @Order(2)
    void daemonFromTheUnit_grantsAJobOfAnotherUser_throughTheInstalledHooks() throws Exception {
        // what an admin does: the cluster's table, and this host's instances in the shipped configuration
        Files.writeString(COMPLEXES, MARK + Files.readString(Path.of("/usr/share/doc/rsmap/examples/complexes")));
        // two cards as device files of their own (major 195 as NVIDIA's), so that isolation is real; under
        // /dev, which the systemd namespace of step 5 shares (its /tmp is its own)
        Files.createDirectories(cards);
        Path card0 = cards.resolve("nvidia0");
        Path card1 = cards.resolve("nvidia1");
        Run.ok(List.of("mknod", "-m", "666", card0.toString(), "c", "195", "0"));
        Run.ok(List.of("mknod", "-m", "666", card1.toString(), "c", "195", "1"));
        adminConf = Files.readString(CONF) + "\n# this host\nhost = node01\ncomplex_values = gpu=2(gpu0[devices=" + card0
                + ":rw] gpu1[devices=" + card1 + ":rw])\n";
        Files.writeString(CONF, adminConf);
        startDaemon();
        assertThat(stat(SOCKET)).as("socket_mode 0660, socket_group rsmap").isEqualTo("root:rsmap 660");
        assertThat(Files.readString(Path.of("/proc", Long.toString(daemon.pid()), "maps"))).as("the JVM maps its CDS archive")
                .contains(CDS.toString());

        Job j = job("1", "gpu=1", "echo \"grant=$SGE_HGR_gpu\"; echo \"user=$(id -un)\"; echo \"groups=$(id -G)\"; "
                + "echo \"devices=$(grep ':devices:' /proc/self/cgroup)\"; case $SGE_HGR_gpu in gpu0) m=" + card0 + " o=" + card1
                + ";; *) m=" + card1 + " o=" + card0 + ";; esac; echo \"mine=$(head -c1 $m 2>&1)\"; echo \"other=$(head -c1 $o 2>&1)\"");
        assertThat(j.exit()).as(j.output()).isZero();
        assertThat(j.output()).containsPattern("(?m)^grant=gpu[01]$").contains("\nuser=nobody\n");
        // the starter reached the 0660 socket through the hook's group, and dropped it before the job ran
        String gid = Run.ok(List.of("getent", "group", "rsmap")).split(":")[2];
        assertThat(List.of(j.line("groups").split(" "))).doesNotContain(gid);
        // device_backend=auto took the cgroup v1 devices controller (PID 1 is not systemd here): the job
        // ran in the cgroup rsmapd made for it, could open its card (no driver behind it: ENXIO) and was
        // refused the other one (EPERM)
        assertThat(j.line("devices")).endsWith(":devices:/rsmap/1");
        assertThat(j.line("mine")).contains("No such device or address");
        assertThat(j.line("other")).contains("Operation not permitted");
        try (Stream<Path> journal = Files.list(JOURNAL_DIR)) {
            assertThat(journal.count()).as("the journal").isPositive();
        }
    }

    @Test
    @Order(3)
    void installedCli_talksToTheInstalledDaemon_checksValues_andRunsTheDemo() throws Exception {
        String status = Run.ok(List.of("/usr/bin/rsmap", "status"));
        assertThat(status).startsWith("host node01, configuration generation 1\n").contains("gpu (2 instances)\n")
                .containsPattern("(?m)^  gpu0 +free +ok$");
        // systemctl reload runs the unit's ExecReload=
        assertThat(Run.ok(UnitFile.read(UNIT).words("Service", "ExecReload"))).contains("(unchanged)");
        assertThat(Run.ok(List.of("/usr/bin/rsmap", "check-host", "--complexes", COMPLEXES.toString(), "gpu=2(gpu0 gpu1)")))
                .isEqualTo("gpu=2(gpu0 gpu1)\n");
        Run refused = Run.of(List.of("/usr/bin/rsmap", "check-request", "--complexes", COMPLEXES.toString(), "gpu=1[scope=job]"));
        assertThat(refused.code()).isEqualTo(2);
        assertThat(refused.output()).isEqualTo("error: column 7: scope= needs same=\n");
        // the demo finds execd-stub and the hooks in /usr/libexec/rsmap
        Run demo = Run.of(List.of("/usr/bin/rsmap", "demo"));
        assertThat(demo.code()).as(demo.output()).isZero();
        assertThat(demo.output()).contains("rsmapd holds nothing now");
        // job_submit.lua's module, stripped as packaged, loads from where the script looks by default (in a
        // Lua 5.1 of bridge's tests, the host's liblua5.1) and answers as rsmap-place --json would
        Path lua = Files.writeString(shared.resolve("place.lua"), "local place = assert(package.loadlib("
                + "'/usr/lib/rsmap/rsmap_place.so', 'luaopen_rsmap_place'))().place\n"
                + "io.write(place('arch == \"x\"', nil, '/nonexistent/rsmap.sock', 1), '\\n')\n");
        assertThat(Run.ok(List.of(Path.of("..", "bridge", "target", "lua-run").toAbsolutePath().toString(),
                lua.toString()))).isEqualTo("{\"error\":\"cannot reach rsmapd at /nonexistent/rsmap.sock: No such file "
                + "or directory\",\"category\":\"unavailable\"}\n");
    }

    @Test
    @Order(4)
    void upgrade_keepsTheConfigurationAndTheJournal_andAHeldGrantStaysHeld() throws Exception {
        Path out = Files.createDirectory(shared.resolve("out")); // the job's owner writes here
        Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path go = shared.resolve("go");
        Path granted = out.resolve("granted");
        Process held = jobProcess("2", "gpu=1", "echo \"$SGE_HGR_gpu\" > " + granted + "; while [ ! -e " + go
                + " ]; do sleep 0.1; done; echo done");
        for (int i = 0; i < 300 && !Files.exists(granted) && held.isAlive(); i++) {
            Thread.sleep(100);
        }
        assertThat(granted).as("job 2 runs with its grant").exists();

        stopDaemon();
        newerVersion();
        String upgraded = Run.ok(List.of("dpkg", "--install", newer.toString()));
        assertThat(Run.ok(List.of("dpkg-query", "-W", "-f", "${Version}", "rsmap"))).as(upgraded).endsWith("-2");
        assertThat(Files.readString(CONF)).as("the admin's configuration").isEqualTo(adminConf);
        assertThat(COMPLEXES).exists();
        assertThat(stat(HOOK)).as("dpkg applied the statoverride to the new hook").isEqualTo("root:rsmap 2755");

        startDaemon();
        assertThat(Run.ok(List.of("/usr/bin/rsmap", "status"))).as("job 2's grant came back from the journal")
                .containsPattern("(?m)^  gpu[01] +held by job 2 +ok$");
        Job both = job("3", "gpu=2", "echo job-ran");
        assertThat(both.exit()).as(both.output()).isEqualTo(99);
        assertThat(both.output()).doesNotContain("job-ran");
        Files.writeString(go, "");
        assertThat(held.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(held.exitValue()).as(new String(held.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();
        Job after = job("4", "gpu=2", "echo \"grant=$SGE_HGR_gpu\"");
        assertThat(after.exit()).as(after.output()).isZero();
        assertThat(after.output()).contains("grant=gpu0 gpu1\n");
    }

    /**
     * Under a real systemd (252 tested), booted as PID 1 of new namespaces that share this file system
     * (cgroup/src/test/resources/systemd-ns/boot.sh): the installed unit starts and is ready (READY=1),
     * runs with its capabilities, no new privileges and a read-only /usr, answers the installed rsmap,
     * reloads, stops cleanly (SuccessExitStatus), and dpkg -r - run inside, where prerm sees systemd -
     * stops it. Then only the configuration, the journal and the cache are left.
     */
    @Test
    @Order(5)
    void remove_underSystemd_stopsTheService_andKeepsOnlyTheConfigurationAndTheJournal() throws Exception {
        stopDaemon();
        Path boot = Path.of("..", "cgroup", "src", "test", "resources", "systemd-ns", "boot.sh").toAbsolutePath().normalize();
        if (!Files.isExecutable(Path.of("/lib/systemd/systemd")) || !Files.exists(Path.of("/sys/fs/cgroup/systemd/cgroup.procs"))) {
            Packages.missing("booting systemd in a namespace needs /lib/systemd/systemd and the name=systemd cgroup hierarchy");
        }
        String name = "rsmap-pkg-" + ProcessHandle.current().pid();
        Run booted = Run.of(List.of("sh", boot.toString(), "start", name));
        assertThat(booted.code()).as("boot.sh start: %s", booted.output()).isZero();
        String init = Packages.lines(booted.output()).get(Packages.lines(booted.output()).size() - 1);
        try {
            // A container's policy-rc.d (exit 101: "no service actions here") would rightly keep the
            // maintainer scripts' deb-systemd-invoke from acting; inside the namespace, the policy of a host.
            Path policy = Path.of("/usr/sbin/policy-rc.d");
            if (Files.exists(policy)) {
                Path allow = Files.writeString(Files.createDirectories(Packages.TARGET.resolve("upgrade")).resolve("policy-rc.d"),
                        "#!/bin/sh\nexit 0\n");
                Files.setPosixFilePermissions(allow, PosixFilePermissions.fromString("rwxr-xr-x"));
                Run bound = inside(init, "mount", "--bind", intoNamespace(init, allow), policy.toString());
                assertThat(bound.code()).as(bound.output()).isZero();
            }
            Run started = inside(init, "systemctl", "start", "rsmapd.service");
            assertThat(started.code()).as("systemctl start: %s\n%s", started.output(), status(init)).isZero();
            assertThat(show(init, "ActiveState")).isEqualTo("active");
            // an upgrade (here: the same version again) restarts a running rsmapd on the new program
            String first = show(init, "MainPID");
            // enabled as an admin would: the link stays on removal and goes on purge
            assertThat(inside(init, "systemctl", "enable", "rsmapd.service").code()).isZero();
            Run upgraded = inside(init, "dpkg", "--install", intoNamespace(init, newer));
            assertThat(upgraded.code()).as(upgraded.output()).isZero();
            assertThat(show(init, "ActiveState")).as(status(init)).isEqualTo("active");
            String pid = show(init, "MainPID");
            assertThat(pid).as("postinst's try-restart: %s", upgraded.output()).isNotEqualTo(first);
            String proc = inside(init, "cat", "/proc/" + pid + "/status").output();
            // CAP_CHOWN (0), CAP_DAC_READ_SEARCH (2), CAP_SYS_ADMIN (21): capability.h
            assertThat(proc).contains("\nCapBnd:\t0000000000200005\n", "\nNoNewPrivs:\t1\n");
            assertThat(inside(init, "nsenter", "-t", pid, "-m", "--", "touch", "/usr/share/rsmap/probe").output())
                    .as("ProtectSystem=strict").contains("Read-only file system");
            assertThat(inside(init, "nsenter", "-t", pid, "-m", "--", "sh", "-c",
                    "touch /var/lib/rsmap/probe /var/cache/rsmap/probe /run/rsmap/probe /var/run/cdi/probe && rm "
                            + "/var/lib/rsmap/probe /var/cache/rsmap/probe /run/rsmap/probe /var/run/cdi/probe && echo writable")
                    .output()).contains("writable");
            assertThat(inside(init, "stat", "-c", "%U:%G %a", "/run/rsmap/rsmapd.sock").output()).isEqualTo("root:rsmap 660\n");
            // a job inside (rsmapd reads its clients' pids in its own PID namespace): the sandboxed daemon
            // isolates it with nothing but its bounding set
            Path card0 = cards.resolve("nvidia0");
            Path card1 = cards.resolve("nvidia1");
            List<String> job = new ArrayList<>(List.of("env", "-u", "RSMAP_SOCKET", "RSMAP_REQUEST=gpu=1"));
            job.addAll(jobCommand("5", "echo \"grant=$SGE_HGR_gpu\"; echo \"devices=$(grep ':devices:' /proc/self/cgroup)\"; "
                    + "echo \"cdi=$RSMAP_CDI_DEVICE $(grep -c '\"path\"' /var/run/cdi/rsmapd-job-5.json)\"; "
                    + "case $SGE_HGR_gpu in gpu0) o=" + card1 + ";; *) o=" + card0 + ";; esac; echo \"other=$(head -c1 $o 2>&1)\""));
            Run j = inside(init, job.toArray(String[]::new));
            assertThat(j.code()).as("%s\n%s", j.output(), status(init)).isZero();
            assertThat(j.output()).containsPattern("(?m)^grant=gpu[01]$").contains("devices=").contains(":devices:/rsmap/5\n");
            assertThat(j.output()).containsPattern("(?m)^other=.*Operation not permitted$");
            // the job's CDI spec in the default cdi_dir, which the sandbox lets rsmapd write: one device node
            assertThat(j.output()).contains("\ncdi=rsmap.io/job=5 1\n");
            assertThat(inside(init, "/usr/bin/rsmap", "status").output()).startsWith("host node01,");
            Run reload = inside(init, "systemctl", "reload", "rsmapd.service");
            assertThat(reload.code()).as("systemctl reload: %s\n%s", reload.output(), status(init)).isZero();

            assertThat(inside(init, "systemctl", "stop", "rsmapd.service").code()).isZero();
            assertThat(show(init, "ActiveState") + " " + show(init, "Result")).as("a clean stop")
                    .isEqualTo("inactive success");
            assertThat(inside(init, "systemctl", "start", "rsmapd.service").code()).isZero();
            String again = show(init, "MainPID");
            Run removed = inside(init, "dpkg", "--remove", "rsmap");
            assertThat(removed.code()).as(removed.output()).isZero();
            assertThat(inside(init, "kill", "-0", again).code()).as("prerm stopped rsmapd").isNotZero();
        } finally {
            Run stopped = Run.of(List.of("sh", boot.toString(), "stop", name, init));
            assertThat(stopped.code()).as("boot.sh stop: %s", stopped.output()).isZero();
        }

        assertThat(dpkgStatus()).isEqualTo("rc ");
        assertThat(Files.readString(CONF)).isEqualTo(adminConf);
        Set<String> left = newPaths();
        left.removeIf(p -> p.startsWith("/var/lib/dpkg/")); // dpkg's own record of the config-files state
        assertThat(left).contains(CONF.toString(), COMPLEXES.toString(), JOURNAL_DIR.toString());
        // and /run/rsmap, which the unit keeps until purge or reboot (RuntimeDirectoryPreserve=yes), and
        // the admin's enablement, kept for a reinstall as Debian keeps it
        assertThat(left).contains(ENABLED.toString());
        assertThat(left).allMatch(p -> p.startsWith("/etc/rsmap") || p.startsWith("/var/lib/rsmap")
                || p.startsWith("/var/cache/rsmap") || p.equals("/run/rsmap") || p.equals(ENABLED.toString()),
                "only the configuration, the journal, the cache and the enablement");
        assertThat(Path.of("/usr/libexec/rsmap")).doesNotExist();
        assertThat(Path.of("/usr/lib/rsmap")).doesNotExist();
        assertThat(Path.of("/usr/share/rsmap")).doesNotExist();
    }

    @Test
    @Order(6)
    void purge_leavesNothing_butTheAdminsOwnFile_andTheGroup() throws Exception {
        Run.ok(List.of("dpkg", "--purge", "rsmap"));
        assertThat(dpkgStatus()).isEmpty();
        assertThat(ENABLED).as("the enablement link").doesNotExist();
        assertThat(newPaths()).containsExactly(COMPLEXES.getParent().toString(), COMPLEXES.toString());
        assertThat(Run.of(List.of("dpkg-statoverride", "--list", HOOK.toString())).code()).as("statoverride removed").isEqualTo(1);
        assertThat(Run.of(List.of("getent", "group", "rsmap")).code()).as("the group stays").isZero();
    }

    // --- systemd in its namespace --------------------------------------------------------------------

    /** A command in the mount and PID namespaces of the booted systemd (host PID {@code init}). */
    static Run inside(String init, String... command) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("nsenter", "-t", init, "-m", "-p", "--"));
        cmd.addAll(List.of(command));
        return Run.of(cmd);
    }

    /**
     * A copy of {@code file} where the namespace sees it: its /tmp is its own (and this clone may live
     * under the host's /tmp), reached from here through its init's root. Returns the path inside.
     */
    static String intoNamespace(String init, Path file) throws IOException {
        Path inside = Path.of("/tmp", file.getFileName().toString());
        Path there = Path.of("/proc", init, "root").resolve(inside.toString().substring(1));
        Files.copy(file, there, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
        return inside.toString();
    }

    static String show(String init, String property) throws Exception {
        return inside(init, "systemctl", "show", "--value", "-p", property, "rsmapd.service").output().strip();
    }

    static String status(String init) throws Exception {
        return inside(init, "systemctl", "status", "--no-pager", "-l", "rsmapd.service").output();
    }

    // --- rsmapd as its unit runs it -------------------------------------------------------------------

    /**
     * Starts ExecStart= of the installed unit with the environment systemd would give it: Environment=,
     * the directories of RuntimeDirectory=, StateDirectory= and CacheDirectory= made with their modes and
     * named in RUNTIME_DIRECTORY, STATE_DIRECTORY and CACHE_DIRECTORY, and systemd's PATH.
     */
    void startDaemon() throws Exception {
        UnitFile unit = UnitFile.read(UNIT);
        ProcessBuilder pb = new ProcessBuilder(unit.execStart());
        Map<String, String> env = pb.environment();
        env.clear();
        env.put("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin");
        env.putAll(unit.environment());
        for (String[] kind : new String[][] {{"Runtime", "/run"}, {"State", "/var/lib"}, {"Cache", "/var/cache"}}) {
            String name = unit.one("Service", kind[0] + "Directory");
            if (name.isEmpty()) {
                continue;
            }
            String mode = unit.one("Service", kind[0] + "DirectoryMode");
            Path dir = Path.of(kind[1], name);
            Files.createDirectories(dir);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(rwx(mode.isEmpty() ? "0755" : mode)));
            env.put(kind[0].toUpperCase(Locale.ROOT) + "_DIRECTORY", dir.toString());
        }
        daemonLog = Files.createTempFile(shared, "rsmapd", ".log");
        daemon = pb.redirectErrorStream(true).redirectOutput(daemonLog.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        for (int i = 0; i < 600 && daemon.isAlive() && !Files.exists(SOCKET); i++) {
            Thread.sleep(100);
        }
        assertThat(daemon.isAlive()).as("rsmapd runs: %s", Files.readString(daemonLog)).isTrue();
        assertThat(SOCKET).as("rsmapd serves: %s", Files.readString(daemonLog)).exists();
    }

    /** SIGTERM, as systemctl stop sends it: rsmapd(8) promises exit 0 once serving. */
    void stopDaemon() throws Exception {
        if (daemon == null) {
            return;
        }
        daemon.destroy();
        if (!daemon.waitFor(30, TimeUnit.SECONDS)) {
            daemon.destroyForcibly();
            throw new AssertionError("rsmapd did not stop on SIGTERM: " + Files.readString(daemonLog));
        }
        int code = daemon.exitValue();
        daemon = null;
        assertThat(code).as("exit code of rsmapd: %s", Files.readString(daemonLog)).isZero();
    }

    // --- jobs through the installed execd-stub ---------------------------------------------------------

    record Job(int exit, String output) {
        /** The value of the job's {@code name=value} line. */
        String line(String name) {
            for (String l : output.split("\n")) {
                if (l.startsWith(name + "=")) {
                    return l.substring(name.length() + 1);
                }
            }
            throw new AssertionError("no " + name + "= line in: " + output);
        }
    }

    /** execd-stub running job {@code id} of nobody with the installed hooks, as docs/integration-ocs.md configures them. */
    List<String> jobCommand(String id, String script) {
        return List.of(STUB.toString(), "--spool", shared.resolve("spool").toString(), "--host", "node01",
                "--job", id, "--user", "nobody", "--cwd", "/", "--tmpdir", shared.toString(),
                "--prolog", "root@" + HOOK + " prolog", "--starter", HOOK.resolveSibling("rsmap-starter").toString(),
                "--epilog", "root@" + HOOK + " epilog", "--", "sh", "-c", script);
    }

    Process jobProcess(String id, String request, String script) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(jobCommand(id, script)).redirectErrorStream(true);
        pb.environment().remove("RSMAP_SOCKET"); // the hook's default, /run/rsmap/rsmapd.sock
        pb.environment().put("RSMAP_REQUEST", request);
        return pb.start();
    }

    Job job(String id, String request, String script) throws Exception {
        Process p = jobProcess(id, request, script);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("job %s ends", id).isTrue();
        return new Job(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    // --- the machine ------------------------------------------------------------------------------------

    /** "ii " installed, "rc " removed with its configuration, "" unknown to dpkg. */
    static String dpkgStatus() throws Exception {
        Run r = Run.of(List.of("dpkg-query", "-W", "-f", "${db:Status-Abbrev}", "rsmap"));
        return r.code() == 0 ? r.output() : "";
    }

    /** The same package at a higher version (release 2), repacked from the built one. */
    Path newerVersion() throws Exception {
        Path dir = Packages.TARGET.resolve("upgrade");
        deleteTree(dir);
        Files.createDirectories(dir);
        Run.ok(List.of("dpkg-deb", "--raw-extract", deb.toString(), dir.resolve("tree").toString()));
        Path control = dir.resolve("tree/DEBIAN/control");
        Files.writeString(control, Files.readString(control).replaceFirst("(?m)^(Version: .*)-1$", "$1-2"));
        newer = dir.resolve("rsmap-newer.deb");
        Run.ok(List.of("dpkg-deb", "--build", dir.resolve("tree").toString(), newer.toString()));
        return newer;
    }

    static String stat(Path p) throws Exception {
        return Run.ok(List.of("stat", "-c", "%U:%G %a", p.toString())).strip();
    }

    /** Every path under ROOTS whose name contains "rsmap". */
    static Set<String> rsmapPaths() throws IOException {
        Set<String> out = new TreeSet<>();
        for (Path root : ROOTS) {
            if (!Files.isDirectory(root)) {
                continue;
            }
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                    if (dir.startsWith("/proc") || dir.startsWith("/sys")) {
                        return FileVisitResult.SKIP_SUBTREE;
                    }
                    note(dir);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    note(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) {
                    return FileVisitResult.CONTINUE; // gone meanwhile
                }

                private void note(Path p) {
                    if (p.getFileName() != null && p.getFileName().toString().toLowerCase(Locale.ROOT).contains("rsmap")) {
                        out.add(p.toString());
                    }
                }
            });
        }
        return out;
    }

    /**
     * What rsmapPaths() has now that it did not have before the install, with everything below those;
     * not man-db's cache of formatted pages (/var/cache/man), which man-db's own cron job ages out.
     */
    Set<String> newPaths() throws IOException {
        Set<String> now = rsmapPaths();
        now.removeAll(before);
        now.removeIf(p -> p.startsWith("/var/cache/man/"));
        Set<String> all = new TreeSet<>();
        for (String p : now) {
            all.add(p);
            if (Files.isDirectory(Path.of(p))) {
                try (Stream<Path> s = Files.walk(Path.of(p))) {
                    s.forEach(q -> all.add(q.toString()));
                }
            }
        }
        return all;
    }

    static String rwx(String octal) {
        String digits = octal.substring(octal.length() - 3);
        StringBuilder b = new StringBuilder();
        for (char c : digits.toCharArray()) {
            int d = c - '0';
            b.append((d & 4) != 0 ? 'r' : '-').append((d & 2) != 0 ? 'w' : '-').append((d & 1) != 0 ? 'x' : '-');
        }
        return b.toString();
    }

    static void deleteIfEmpty(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            try (Stream<Path> s = Files.list(dir)) {
                if (s.findAny().isEmpty()) {
                    Files.delete(dir);
                }
            }
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        List<Path> all = new ArrayList<>();
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(all::add);
        }
        for (Path p : all) {
            Files.deleteIfExists(p);
        }
    }
}
