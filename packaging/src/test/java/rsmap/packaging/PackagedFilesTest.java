// The files the packages carry, checked as sources: the default rsmapd.conf against the daemon's own
// parser, the unit against what packaging asks of it, the man pages against the keys and commands that
// exist, the launchers and maintainer scripts against the shell.
package rsmap.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import rsmap.daemon.config.Config;

class PackagedFilesTest {
    static final Path MAIN = Path.of("src", "main");
    static final Path CONF = MAIN.resolve("conf/rsmapd.conf");
    static final Path UNIT = MAIN.resolve("systemd/rsmapd.service");
    static final Path MAN = MAIN.resolve("man");

    /** rsmapd.conf's keys: the components of the daemon's Config record, in snake case (its KEYS), GpuSettings' and CdiSettings' keys. */
    static List<String> configKeys() {
        List<String> keys = new ArrayList<>();
        for (var c : Config.class.getRecordComponents()) {
            if (c.getName().equals("gpus")) { // the GPU settings, one record of their own
                keys.addAll(rsmap.daemon.config.GpuSettings.KEYS);
            } else if (c.getName().equals("cdi")) { // the CDI settings, one record of their own
                keys.addAll(rsmap.daemon.config.CdiSettings.KEYS);
            } else if (c.getName().equals("health")) { // the health settings, one record of their own
                keys.addAll(rsmap.daemon.config.HealthSettings.KEYS);
            } else if (!c.getName().equals("lines")) { // where each key was set, not a key
                keys.add(c.getName().replaceAll("([A-Z])", "_$1").toLowerCase(Locale.ROOT));
            }
        }
        return keys;
    }

    @Test
    void defaultConfig_readByTheDaemonsParser_namesTheDocumentedPaths() throws Exception {
        Path installed = Path.of("/etc/rsmap/rsmapd.conf");
        Config c = Config.parse(Files.readString(CONF), installed, "node01");
        assertThat(c.complexes()).isEqualTo(Path.of("/etc/rsmap/complexes"));
        assertThat(c.socket()).isEqualTo(Path.of("/run/rsmap/rsmapd.sock"));
        assertThat(c.stateDir()).isEqualTo(Path.of("/var/lib/rsmap"));
        assertThat(c.deviceBackend()).isEqualTo("auto");
        assertThat(c.isolation().name()).isEqualTo("REQUIRED");
        assertThat(c.socketGroup()).isEqualTo("rsmap");
        assertThat(c.socketMode()).isEqualTo("rw-rw----");
        assertThat(c.host()).as("the system's name unless the admin sets one").isEqualTo("node01");
        assertThat(c.complexValues()).isEqualTo("NONE");
        assertThat(c.execdSpool()).isNull();
    }

    @Test
    void defaultConfig_mentionsEveryKey_setOrAsACommentedDefault() throws Exception {
        String text = Files.readString(CONF);
        for (String key : configKeys()) {
            assertThat(text).as("rsmapd.conf mentions %s", key).containsPattern("(?m)^#?" + key + " = ");
        }
    }

    @Test
    void defaultConfig_everyCommentedLine_parsesWhenUncommented() throws Exception {
        // what the admin gets by deleting the '#' of a key line: the daemon must take it. One line at a time:
        // some exclude each other (authority and global_complex_values); an authority's own keys
        // (listen, takeover_timeout) are read as the authority's configuration.
        List<String> lines = Files.readAllLines(CONF);
        StringBuilder base = new StringBuilder();
        List<String> commented = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            if (l.matches("#[a-z_]+ = .*")) {
                StringBuilder one = new StringBuilder(l.substring(1)).append('\n');
                while (l.endsWith("\\")) {
                    l = lines.get(++i);
                    one.append(l.replaceFirst("^#", "")).append('\n');
                }
                commented.add(one.toString());
            } else if (!l.startsWith("#")) {
                base.append(l).append('\n');
            }
        }
        assertThat(Config.parse(base.toString(), Path.of("/etc/rsmap/rsmapd.conf"), "node01").host()).isEqualTo("node01");
        for (String one : commented) {
            if (one.startsWith("listen = ") || one.startsWith("takeover_timeout = ")) {
                Config a = Config.parse("role = authority\ncomplexes = /etc/rsmap/complexes\n"
                        + (one.startsWith("listen = ") ? "" : "listen = 0.0.0.0:7321\n") + one,
                        Path.of("/etc/rsmap/rsmapd.conf"), "node00");
                assertThat(a.isAuthority()).isTrue();
                continue;
            }
            Config c = Config.parse(base + one, Path.of("/etc/rsmap/rsmapd.conf"), "node01");
            if (one.startsWith("complex_values = ")) {
                assertThat(c.complexValues()).startsWith("gpu=2(gpu0[devices=/dev/nvidia0:rw;/dev/nvidiactl:rw]");
            }
            if (one.startsWith("execd_spool = ")) {
                assertThat(c.execdSpool()).isEqualTo(Path.of("/var/spool/sge/node01"));
            }
        }
        assertThat(commented).anyMatch(l -> l.startsWith("complex_values = ")).anyMatch(l -> l.startsWith("execd_spool = "));
    }

    @Test
    void configManPage_describesEveryKey_andNoOther() throws Exception {
        String page = roffText(MAN.resolve("rsmapd.conf.5"));
        List<String> described = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^\\.BI \"([a-z_]+) = \"").matcher(page);
        while (m.find()) {
            described.add(m.group(1));
        }
        assertThat(described).containsExactlyInAnyOrderElementsOf(configKeys());
    }

    @Test
    void cliManPage_describesEveryCommand() throws Exception {
        StringWriter out = new StringWriter();
        rsmap.cli.Main.run(new PrintWriter(out), new PrintWriter(new StringWriter()), "--help");
        String help = out.toString();
        List<String> commands = new ArrayList<>();
        boolean in = false;
        for (String line : help.split("\n")) {
            if (line.startsWith("Commands:")) {
                in = true;
            } else if (in && line.matches("  [a-z][a-z-]*\\s.*")) {
                commands.add(line.strip().split("\\s+")[0]);
            }
        }
        assertThat(commands).as("rsmap --help lists commands").isNotEmpty();
        String page = roffText(MAN.resolve("rsmap.1"));
        for (String c : commands) {
            assertThat(page).as("rsmap(1) describes '%s'", c).containsPattern("(?m)^\\.BI? \"?" + Pattern.quote(c) + "\\b");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"rsmap.1", "rsmap-shell.1", "rsmapd.8", "rsmapd.conf.5"})
    void manPage_rendersWithoutWarnings(String page) throws Exception {
        Run r = Run.of(List.of("groff", "-man", "-ww", "-z", MAN.resolve(page).toString()), "LC_ALL=C.UTF-8");
        assertThat(r.output()).as("groff warnings for %s", page).isEmpty();
        assertThat(r.code()).isZero();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            # key                  | value: what packaging asks of the unit
            Type                   | notify
            NotifyAccess           | main
            ExecStart              | /usr/sbin/rsmapd --config /etc/rsmap/rsmapd.conf
            ExecReload             | /usr/bin/rsmap reload
            Restart                | on-failure
            ProtectSystem          | strict
            NoNewPrivileges        | yes
            RuntimeDirectory       | rsmap
            RuntimeDirectoryMode   | 0755
            StateDirectory         | rsmap
            CacheDirectory         | rsmap
            ReadWritePaths         | /sys/fs/cgroup -/run/cdi
            ExecStartPre           | -+/bin/mkdir -p -m 0755 /run/cdi
            CapabilityBoundingSet  | CAP_SYS_ADMIN CAP_CHOWN CAP_DAC_READ_SEARCH
            SuccessExitStatus      | 143
            RestartPreventExitStatus | 2
            """)
    void unit_setsWhatTheIssueAsks(String key, String value) throws Exception {
        assertThat(UnitFile.read(UNIT).one("Service", key)).isEqualTo(value);
    }

    @Test
    void unit_isInstalledDisabled_andWantedByTheMultiUserTarget() throws Exception {
        UnitFile u = UnitFile.read(UNIT);
        assertThat(u.one("Install", "WantedBy")).isEqualTo("multi-user.target");
        assertThat(u.one("Unit", "Documentation")).contains("man:rsmapd(8)", "man:rsmapd.conf(5)");
    }

    @Test
    void launchers_passTheOptionsTheProgramsNeed() throws Exception {
        String rsmapd = Files.readString(MAIN.resolve("bin/rsmapd"));
        assertThat(rsmapd).contains("--add-exports java.base/sun.nio.ch=ALL-UNNAMED", "-cp \"$jar\" rsmap.daemon.Main \"$@\"",
                "jar=/usr/share/rsmap/rsmap.jar", "exec ");
        String rsmap = Files.readString(MAIN.resolve("bin/rsmap"));
        assertThat(rsmap).contains("-Drsmap.libexec=/usr/libexec/rsmap", "-jar \"$jar\" \"$@\"", "jar=/usr/share/rsmap/rsmap.jar",
                "--add-exports java.base/sun.nio.ch=ALL-UNNAMED"); // rsmap demo runs rsmapd in its JVM
    }

    @ParameterizedTest
    @CsvSource({"rsmapd, RSMAPD_JAVA_OPTS", "rsmap, RSMAP_JAVA_OPTS"})
    void launcher_defaultJvmOptions_areTheRepositoryLaunchers(String launcher, String variable) throws Exception {
        // bin/rsmapd's options were chosen by measurement: the packaged programs run with the same
        Pattern opts = Pattern.compile("\\$\\{" + variable + ":-([^}]*)}");
        Matcher repo = opts.matcher(Files.readString(Path.of("..", "bin", launcher)));
        Matcher packaged = opts.matcher(Files.readString(MAIN.resolve("bin").resolve(launcher)));
        assertThat(repo.find()).as("bin/%s has ${%s:-...}", launcher, variable).isTrue();
        assertThat(packaged.find()).isTrue();
        assertThat(packaged.group(1)).isEqualTo(repo.group(1));
    }

    @Test
    void shellScripts_parseWithPosixSh() throws Exception {
        List<Path> scripts = new ArrayList<>(List.of(MAIN.resolve("bin/rsmap"), MAIN.resolve("bin/rsmapd")));
        for (String s : List.of("postinst", "prerm", "postrm")) {
            scripts.add(MAIN.resolve("deb/control").resolve(s));
        }
        try (Stream<Path> rpm = Files.list(MAIN.resolve("rpm"))) {
            rpm.sorted().forEach(scripts::add);
        }
        for (Path s : scripts) {
            Run r = Run.of(List.of("sh", "-n", s.toString()));
            assertThat(r.code()).as("sh -n %s: %s", s, r.output()).isZero();
        }
        for (String s : List.of("postinst", "prerm", "postrm")) {
            Path p = MAIN.resolve("deb/control").resolve(s);
            assertThat(Files.isExecutable(p)).as("%s is executable (dpkg runs it)", p).isTrue();
            assertThat(Files.readString(p)).startsWith("#!/bin/sh\n").contains("\nset -e\n");
        }
    }

    /** The page's text with roff's escaped hyphens as plain ones. */
    static String roffText(Path page) throws Exception {
        return new String(Files.readAllBytes(page), StandardCharsets.UTF_8).replace("\\-", "-");
    }
}
