// the hooks and the rsmap command believe only a server the kernel says is root or rsmapd's
// daemon_user - never a socket that RSMAP_SOCKET or --socket points at because a job's owner said so. Real
// hooks built with their installed configuration in a test directory, a real fake daemon run as the job
// user, the real starter run as that user, the real bin/rsmap.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HookTrustIT {
    static final String GRANT = "SGE_HGR_gpu=0 1";
    @RegisterExtension
    static final HookBuild build = new HookBuild("running the job user's daemon and starter");
    long uid;
    Path owners;

    @BeforeAll
    void owners() throws Exception {
        uid = HookBuild.uid(build.user());
        // The job owner's own daemon, where the job's RSMAP_SOCKET points: it grants every card.
        owners = build.fake(build.user(), "owners", "grant", GRANT);
    }

    @BeforeEach
    void noInstalledConfiguration() throws Exception {
        build.uninstall();
    }

    /** The starter as the job's owner, as execd runs it; the job leaves a marker with what it saw. */
    private HookBuild.Run starter(Path socket, Path marker) throws Exception {
        Files.deleteIfExists(marker);
        Map<String, String> env = new HashMap<>(Map.of("JOB_ID", "7", "SGE_TASK_ID", "undefined",
                "RSMAP_REQUEST", "gpu=1", "RSMAP_SOCKET", socket.toString()));
        return HookBuild.run(build.user(), List.of(build.starter().toString(), "sh", "-c", "echo \"$SGE_HGR_gpu\" > " + marker),
                env);
    }

    private Path marker() {
        return build.dir().resolve("run").resolve("ran");
    }

    @Test
    void starter_ownersDaemon_underAnInstalledConfiguration_doesNotRunTheJob() throws Exception {
        build.install("complexes = /etc/rsmap/complexes\nsocket = /run/rsmap/rsmapd.sock\n"); // daemon_user: root
        HookBuild.Run r = starter(owners, marker());
        assertThat(r.code()).as("job error: execd puts the job in error state").isEqualTo(100);
        assertThat(r.err()).isEqualTo("rsmap-hook: not trusting the server at " + owners + ": it runs as uid " + uid
                + ", not as root or daemon_user 'root' of " + build.sysconf() + "\n");
        assertThat(marker()).as("the job did not run").doesNotExist();
    }

    @Test
    void starter_daemonUserOfTheInstalledConfiguration_isTrusted() throws Exception {
        build.install("complexes = /etc/rsmap/complexes\nDaemon_User = " + build.user() + "   # rsmapd's own account\n");
        HookBuild.Run r = starter(owners, marker());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(Files.readString(marker())).isEqualTo("0 1\n");
    }

    /** Installed configurations that must not make the job user's daemon trusted, and the reason given. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            complex_values = gpu=2(a \\\\ndaemon_user = USER)            | not as root or daemon_user 'root'
            '# a comment that goes on \\\\ndaemon_user = USER'           | not as root or daemon_user 'root'
            '#daemon_user = USER'                                       | not as root or daemon_user 'root'
            daemon_user = root\\ndaemon_user = USER                    | sets daemon_user twice, empty or too long
            daemon_user =                                               | sets daemon_user twice, empty or too long
            daemon_user = no-such-user-here                             | daemon_user 'no-such-user-here' of SYSCONF is not in /etc/passwd
            """)
    void starter_configurationThatDoesNotNameTheUser_refuses(String text, String why) throws Exception {
        build.install(text.replace("\\n", "\n").replace("USER", build.user()) + "\n");
        HookBuild.Run r = starter(owners, marker());
        assertThat(r.code()).as(r.err()).isEqualTo(100);
        assertThat(r.err()).startsWith("rsmap-hook: not trusting the server at " + owners)
                .contains(why.replace("SYSCONF", build.sysconf().toString())).endsWith("\n").hasLineCount(1);
        assertThat(marker()).doesNotExist();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            chown USER SYSCONF         | it is not owned by root
            chmod 664 SYSCONF          | it is writable by group or others
            chmod 646 SYSCONF          | it is writable by group or others
            rm SYSCONF; mkdir SYSCONF  | it is not a regular file
            chmod 600 SYSCONF          | cannot read SYSCONF (Permission denied)
            """)
    void starter_configurationThatCannotBeBelieved_refuses(String change, String why) throws Exception {
        build.install("complexes = /etc/rsmap/complexes\ndaemon_user = " + build.user() + "\n");
        ExecdCell.sh(change.replace("USER", build.user()).replace("SYSCONF", build.sysconf().toString()));
        HookBuild.Run r = starter(owners, marker());
        assertThat(r.code()).as(r.err()).isEqualTo(100);
        assertThat(r.err()).isEqualTo("rsmap-hook: not trusting the server at " + owners + " (uid " + uid + "): "
                + (why.startsWith("cannot") ? why.replace("SYSCONF", build.sysconf().toString()) + ", which says who may serve"
                : build.sysconf() + " cannot say who may serve: " + why) + "\n");
        assertThat(marker()).doesNotExist();
    }

    @Test
    void noInstalledConfiguration_theTour_trustsTheInvokingUsersOwnDaemon_butRootsHooksDoNot() throws Exception {
        HookBuild.Run r = starter(owners, marker());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(Files.readString(marker())).isEqualTo("0 1\n");
        // The prolog and the epilog run as root: a job owner's daemon never answers them.
        Map<String, String> env = Map.of("JOB_ID", "7", "RSMAP_REQUEST", "gpu=1", "RSMAP_SOCKET", owners.toString());
        String refusal = "rsmap-hook: not trusting the server at " + owners + ": it runs as uid " + uid
                + ", not as root or as this process's user (uid 0; no " + build.sysconf() + " installed)\n";
        assertThat(HookBuild.run(null, List.of(build.hook().toString(), "prolog"), env))
                .as("reschedule").isEqualTo(new HookBuild.Run(99, "", refusal));
        assertThat(HookBuild.run(null, List.of(build.hook().toString(), "epilog"), env))
                .isEqualTo(new HookBuild.Run(1, "", refusal));
        assertThat(build.log("owners")).as("only the starter's JOB_ENTER reached it").containsExactly(
                "0014 {\"job\":\"7\",\"task\":\"undefined\"}");
    }

    @Test
    void prolog_rootsOwnDaemon_isTrustedUnderAnInstalledConfiguration() throws Exception {
        build.install("complexes = /etc/rsmap/complexes\n");
        Path roots = build.fake(null, "roots", "grant", "SGE_HGR_gpu=1");
        HookBuild.Run r = HookBuild.run(null, List.of(build.hook().toString(), "prolog"),
                Map.of("JOB_ID", "8", "RSMAP_REQUEST", "gpu=1", "RSMAP_SOCKET", roots.toString()));
        assertThat(r).isEqualTo(new HookBuild.Run(0, "SGE_HGR_gpu=1\n", ""));
    }

    // --- rsmap-shell, run by the job's owner inside the job ----------------------------------------------

    @Test
    void rsmapShell_ownersDaemon_underAnInstalledConfiguration_exit1_sendsNothing() throws Exception {
        build.install("complexes = /etc/rsmap/complexes\n"); // daemon_user: root
        for (String who : new String[] {build.user(), null}) {
            HookBuild.Run r = HookBuild.run(who, List.of(build.shell().toString(), "realloc", "--add", "gpu=1"),
                    Map.of("JOB_ID", "7", "RSMAP_SOCKET", owners.toString()));
            assertThat(r).as("as " + (who == null ? "root" : who)).isEqualTo(new HookBuild.Run(1, "",
                    "rsmap-shell: not trusting the server at " + owners + ": it runs as uid " + uid
                    + ", not as root or daemon_user 'root' of " + build.sysconf() + "\n"));
        }
        assertThat(build.log("owners")).noneMatch(line -> line.startsWith("0015 "));
    }

    // --- the rsmap command, run by root ------------------------------------------------------------------

    @Test
    void rsmapStatus_asRoot_refusesTheJobUsersSocket_exit1OneErrorLine() throws Exception {
        Path rsmap = Path.of("..", "bin", "rsmap").toAbsolutePath().normalize();
        Path jar = Path.of("target", "rsmap.jar");
        if (!Files.exists(jar)) {
            Assumptions.abort("needs the packaged jar (mvn package)");
        }
        // bin/rsmap reads /etc/rsmap/rsmapd.conf, absent here or naming root: the job user is trusted by neither.
        HookBuild.Run r = HookBuild.run(null, List.of(rsmap.toString(), "status", "--socket", owners.toString()),
                Map.of("HOME", "/root"));
        assertThat(r.code()).as("rsmap(1): the daemon could not be asked, exit 1: " + r.out() + r.err()).isEqualTo(1);
        assertThat(r.err()).startsWith("error: not trusting the server at " + owners + ": it runs as uid " + uid
                + ", not as root").hasLineCount(1);
        assertThat(r.out()).isEmpty();
        // The same server named daemon_user of the configuration rsmap reads (-Drsmap.sysconf, for tests): believed.
        Path conf = build.dir().resolve("etc").resolve("cli.conf");
        Files.writeString(conf, "complexes = x\ndaemon_user = " + build.user() + "\n");
        Files.setPosixFilePermissions(conf, PosixFilePermissions.fromString("rw-r--r--"));
        HookBuild.Run ok = HookBuild.run(null, List.of(rsmap.toString(), "status", "--json", "--socket",
                owners.toString()), Map.of("HOME", "/root", "RSMAP_JAVA_OPTS", "-Drsmap.sysconf=" + conf));
        assertThat(ok.code()).as(ok.err()).isZero();
        assertThat(ok.out()).isEqualTo("{\"grants\":{}}\n");
    }
}
