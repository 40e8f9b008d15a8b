// rsmap-shell (src/main/c/rsmap-shell.c), what a running job runs to grow or shrink its grant (docs/protocol.md,
// "Dynamic reallocation"), against a scripted stand-in for rsmapd (FakeDaemon): its exit codes and output,
// and the exact JSON it sends. Its status (QUERY) also against the real daemon.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.daemon.HookBuild.Run;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Polls;
import rsmap.wire.Session;

class RsmapShellIT {
    static final Path SHELL = ExecdCell.SHELL;
    // The codes of docs/protocol.md ("Codes").
    static final int REALLOC = Code.REALLOC.value();
    static final int RELEASE = Code.RELEASE.value();
    static final int REALLOC_CANCEL = Code.REALLOC_CANCEL.value();
    static final int ALLOC = Code.ALLOC.value();
    static final String GRANTED = "{\"job\":\"7\",\"tag\":\"t1\",\"alloc_id\":3,\"type\":0,"
            + "\"added\":{\"node01\":{\"gpu\":[\"1\"]}},\"env\":{\"SGE_HGR_gpu\":\"0 1\"}}";

    @TempDir
    Path tmp;
    Path sock;

    @BeforeEach
    void built() {
        assertThat(SHELL).as("built by the Maven build (src/main/c/build.sh)").isExecutable();
        sock = tmp.resolve("fake.sock");
    }

    /** ALLOC (JSON, type, reason, NAME=value lines) then OK, as rsmapd answers a decided realloc. */
    static List<Frame> alloc(Frame command, int type, String reason, String... lines) {
        List<String> args = new ArrayList<>(List.of(type == 0 ? GRANTED : "{\"type\":" + type + "}",
                Integer.toString(type), reason));
        args.addAll(List.of(lines));
        return List.of(Frame.of(command.tid(), ALLOC, args.toArray(String[]::new)), Session.ok(command.tid()));
    }

    /** What a working rsmapd answers each command with. */
    static List<Frame> answering(Frame c) {
        if (c.code() == REALLOC) {
            return alloc(c, 0, "", "SGE_HGR_gpu=0 1", "SGE_HGR_nic=ib0");
        }
        if (c.code() == REALLOC_CANCEL) {
            return alloc(c, 2, "");
        }
        return FakeDaemon.granting(c, "{\"job\":\"7\",\"grants\":{}}", "SGE_HGR_gpu=0");
    }

    static Map<String, String> job7() {
        return Map.of("JOB_ID", "7", "SGE_TASK_ID", "undefined");
    }

    /** rsmap-shell with exactly {@code env} (and PATH and the fake's socket unless env names another). */
    Run shell(Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(SHELL.toString()));
        cmd.addAll(List.of(args));
        Map<String, String> all = new HashMap<>(Map.of("RSMAP_SOCKET", sock.toString()));
        all.putAll(env);
        return HookBuild.run(null, cmd, all, 30);
    }

    Run against(Function<Frame, List<Frame>> script, String... args) throws Exception {
        try (FakeDaemon fake = new FakeDaemon(sock, script)) {
            return shell(job7(), args);
        }
    }

    // --- the answers: exit codes and output ---------------------------------------------------------------

    @Test
    void realloc_success_printsTheJobsEnvironment_exit0() throws Exception {
        assertThat(against(RsmapShellIT::answering, "realloc", "--add", "gpu=1", "--tag", "t1"))
                .isEqualTo(new Run(0, "SGE_HGR_gpu=0 1\nSGE_HGR_nic=ib0\n", ""));
    }

    /** RFC 51's types other than SUCCESS: one line naming the tag (rsmapd's default one without --tag), exit 3. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            # type | reason                                   | --tag | stderr
            1      | gpu: needs 2 free matching instances, 1 available | t1 | rsmap-shell: realloc t1: DENY: gpu: needs 2 free matching instances, 1 available
            2      | cancelled by realloc_cancel             | a.b:c@d-e_f | rsmap-shell: realloc a.b:c@d-e_f: CANCEL: cancelled by realloc_cancel
            2      | ''                                      | t1    | rsmap-shell: realloc t1: CANCEL
            3      | reallocation is off on node01           | ''    | rsmap-shell: realloc tid-00000002: UNSUPPORTED: reallocation is off on node01
            """)
    void realloc_decidedAgainst_saysTypeAndReason_exit3(int type, String reason, String tag, String err) throws Exception {
        List<String> args = new ArrayList<>(List.of("realloc", "--add", "gpu=2"));
        if (!tag.isEmpty()) {
            args.addAll(List.of("--tag", tag));
        }
        // the job's environment after a refusal is unchanged, and not printed
        Run r = against(c -> alloc(c, type, reason, "SGE_HGR_gpu=0"), args.toArray(String[]::new));
        assertThat(r).isEqualTo(new Run(3, "", err + "\n"));
    }

    @Test
    void errorFromRsmapd_oneLine_exit2() throws Exception {
        String why = "\"sub\": job 7 holds no 'nic'";
        assertThat(against(c -> FakeDaemon.refusing(c, why), "realloc", "--sub", "nic=1", "--tag", "t1"))
                .isEqualTo(new Run(2, "", "rsmap-shell: realloc t1: ERROR: " + why + "\n"));
        assertThat(against(c -> FakeDaemon.refusing(c, "nothing to release"), "release"))
                .isEqualTo(new Run(2, "", "rsmap-shell: release: ERROR: nothing to release\n"));
        assertThat(against(c -> FakeDaemon.refusing(c, "no waiting realloc of job 7 has tag 'x'"), "cancel", "x"))
                .isEqualTo(new Run(2, "", "rsmap-shell: cancel x: ERROR: no waiting realloc of job 7 has tag 'x'\n"));
    }

    @Test
    void errorFromRsmapd_byItsCategory_unavailableOrInternalIsExit1_whateverItSays() throws Exception {
        // docs/protocol.md, "Error categories": rsmapd's trouble is 1, like no answer; the command's is 2.
        for (rsmap.wire.Category c : rsmap.wire.Category.values()) {
            int exit = c == rsmap.wire.Category.UNAVAILABLE || c == rsmap.wire.Category.INTERNAL ? 1 : 2;
            assertThat(against(f -> FakeDaemon.refusing(f, "nothing to release", c), "release"))
                    .as("category %s", c).isEqualTo(new Run(exit, "", "rsmap-shell: release: ERROR: nothing to release\n"));
        }
    }

    @Test
    void realloc_aRequestWhoseFormDoesNotParse_isAUsageError_exit2_andNothingIsSent() throws Exception {
        // rsmap-shell(1), "EXIT STATUS" 2: a request that does not parse, checked before anything is sent.
        List<Frame> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        Run r = against(c -> {
            seen.add(c);
            return answering(c);
        }, "realloc", "--add", "gpu=1[same=id", "--tag", "t1");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("rsmap-shell: --add: column ").contains("']'").hasLineCount(1);
        assertThat(seen).isEmpty();
        assertThat(against(RsmapShellIT::answering, "realloc", "--sub", "=1").code()).isEqualTo(2);
    }

    @ParameterizedTest
    @CsvSource({"realloc --add gpu=1", "release", "cancel t1", "status"})
    void unreachable_exit1(String args) throws Exception {
        Run r = shell(job7(), args.split(" "));
        assertThat(r).isEqualTo(new Run(1, "", "rsmap-shell: cannot reach rsmapd at " + sock
                + ": No such file or directory\n"));
    }

    /** Answers that are not rsmapd's protocol: no decision reached the job, exit 1. */
    @Test
    void lostOrMalformedAnswer_exit1() throws Exception {
        assertThat(against(c -> List.of(), "realloc", "--add", "gpu=1", "--tag", "t1"))
                .as("rsmapd died before it answered")
                .isEqualTo(new Run(1, "", "rsmap-shell: realloc t1: lost rsmapd during REALLOC\n"));
        assertThat(against(c -> List.of(Session.ok(c.tid())), "realloc", "--add", "gpu=1", "--tag", "t1"))
                .isEqualTo(new Run(1, "", "rsmap-shell: realloc t1: rsmapd answered OK without an ALLOC event\n"));
        assertThat(against(c -> List.of(Frame.of(c.tid(), ALLOC, "{}", "4", "?"), Session.ok(c.tid())),
                "realloc", "--add", "gpu=1", "--tag", "t1"))
                .isEqualTo(new Run(1, "", "rsmap-shell: realloc t1: rsmapd answered an ALLOC without a known type ('4')\n"));
        List<Frame> twice = new ArrayList<>();
        assertThat(against(c -> {
            twice.clear();
            twice.add(Frame.of(c.tid(), ALLOC, "{}", "0", ""));
            twice.addAll(alloc(c, 0, ""));
            return twice;
        }, "realloc", "--add", "gpu=1", "--tag", "t1"))
                .isEqualTo(new Run(1, "", "rsmap-shell: realloc t1: rsmapd answered with two ALLOC events\n"));
        assertThat(against(c -> List.of(Session.ok(c.tid())), "status"))
                .isEqualTo(new Run(1, "", "rsmap-shell: status: rsmapd answered OK without a STATE event\n"));
    }

    @Test
    void release_printsTheJobsEnvironment_status_theJson_cancel_nothing() throws Exception {
        try (FakeDaemon fake = new FakeDaemon(sock, RsmapShellIT::answering)) {
            assertThat(shell(job7(), "release")).isEqualTo(new Run(0, "SGE_HGR_gpu=0\n", ""));
            assertThat(shell(job7(), "status")).isEqualTo(new Run(0, "{\"job\":\"7\",\"grants\":{}}\n", ""));
            assertThat(shell(job7(), "cancel", "t1")).isEqualTo(new Run(0, "", ""));
        }
    }

    /** A realloc waits for its decision however long it takes: only a signal ends it, as "cancelled". */
    @ParameterizedTest
    @CsvSource({"TERM", "INT"})
    void realloc_signalWhileWaiting_exitsCancelled_exit3(String signal) throws Exception {
        CountDownLatch decided = new CountDownLatch(1);
        try (FakeDaemon fake = new FakeDaemon(sock, c -> {
            try {
                decided.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return alloc(c, 0, "");
        })) {
            ProcessBuilder pb = new ProcessBuilder(SHELL.toString(), "realloc", "--add", "gpu=1", "--tag", "t1");
            pb.environment().clear();
            pb.environment().putAll(Map.of("RSMAP_SOCKET", sock.toString(), "JOB_ID", "7"));
            Process p = pb.start();
            Polls.await(Duration.ofSeconds(5), () -> !fake.received.isEmpty());
            assertThat(fake.received).as("the realloc arrived").hasSize(1);
            Thread.sleep(1500); // the thing tested: past the hooks' habits, no timeout ends the wait
            assertThat(p.isAlive()).isTrue();
            assertThat(ExecdCell.sh("kill -s " + signal + " " + p.pid() + "; echo $?").strip()).isEqualTo("0");
            assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(new Run(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                    new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8)))
                    .isEqualTo(new Run(3, "", "rsmap-shell: realloc t1: cancelled\n"));
        } finally {
            decided.countDown();
        }
    }

    // --- what it sends --------------------------------------------------------------------------------------

    record Sent(String args, Map<String, String> env, int code, String json) {
    }

    /** The command line, the job's environment, and the one command rsmapd receives: code and exact JSON. */
    static Stream<Sent> sent() {
        Map<String, String> none = Map.of();
        return Stream.of(
                // the job: $JOB_ID, with .$SGE_TASK_ID when that is a number, else $SLURM_JOB_ID; --job overrides
                new Sent("realloc --add gpu=1[same=id]", job7(), REALLOC, "{\"job\":\"7\",\"add\":\"gpu=1[same=id]\"}"),
                new Sent("status", Map.of("JOB_ID", "7"), Code.QUERY.value(), "{\"job\":\"7\"}"),
                new Sent("status", Map.of("JOB_ID", "7", "SGE_TASK_ID", "3"), Code.QUERY.value(),
                        "{\"job\":\"7\",\"task\":\"3\"}"),
                new Sent("status", Map.of("JOB_ID", "7", "SGE_TASK_ID", "3x"), Code.QUERY.value(), "{\"job\":\"7\"}"),
                new Sent("status", Map.of("SLURM_JOB_ID", "42"), Code.QUERY.value(), "{\"job\":\"42\"}"),
                new Sent("status", Map.of("JOB_ID", "7", "SLURM_JOB_ID", "42"), Code.QUERY.value(), "{\"job\":\"7\"}"),
                new Sent("status", Map.of("JOB_ID", "", "SLURM_JOB_ID", "42"), Code.QUERY.value(), "{\"job\":\"42\"}"),
                new Sent("status --job 9.2", job7(), Code.QUERY.value(), "{\"job\":\"9\",\"task\":\"2\"}"),
                new Sent("status --job=9", none, Code.QUERY.value(), "{\"job\":\"9\"}"),
                // not a task number after the dot: all of it is the job, for rsmapd to judge
                new Sent("status --job 9.x", none, Code.QUERY.value(), "{\"job\":\"9.x\"}"),
                new Sent("status --job .5", none, Code.QUERY.value(), "{\"job\":\".5\"}"),
                // the request language as a JSON string: quotes, backslashes and control characters escaped
                new Sent("realloc --tag t1 --add gpu=1[id=\"a\\b\"]", job7(), REALLOC,
                        "{\"job\":\"7\",\"tag\":\"t1\",\"add\":\"gpu=1[id=\\\"a\\\\b\\\"]\"}"),
                new Sent("realloc --add gpu=1\tx", job7(), REALLOC, "{\"job\":\"7\",\"add\":\"gpu=1\\u0009x\"}"),
                new Sent("realloc --sub=nic=1 --add=gpu=2 --tag=grow", job7(), REALLOC,
                        "{\"job\":\"7\",\"tag\":\"grow\",\"add\":\"gpu=2\",\"sub\":\"nic=1\"}"),
                // --ids as raw JSON, as given
                new Sent("realloc --sub gpu=1 --ids {\"node01\":{\"gpu\":[\"1\"]}}", job7(), REALLOC,
                        "{\"job\":\"7\",\"sub\":\"gpu=1\",\"ids\":{\"node01\":{\"gpu\":[\"1\"]}}}"),
                new Sent("realloc --ids {\"n\":{\"g\":[\"}]\\\"\"]}}", job7(), REALLOC,
                        "{\"job\":\"7\",\"ids\":{\"n\":{\"g\":[\"}]\\\"\"]}}}"),
                new Sent("release", job7(), RELEASE, "{\"job\":\"7\"}"),
                new Sent("release --ids {\"node01\":{\"gpu\":[\"1\"]}} --job 7.1", none, RELEASE,
                        "{\"job\":\"7\",\"task\":\"1\",\"ids\":{\"node01\":{\"gpu\":[\"1\"]}}}"),
                new Sent("cancel t1", job7(), REALLOC_CANCEL, "{\"job\":\"7\",\"tag\":\"t1\"}"),
                new Sent("cancel --job 8 t1", none, REALLOC_CANCEL, "{\"job\":\"8\",\"tag\":\"t1\"}"));
    }

    @ParameterizedTest
    @MethodSource("sent")
    void command_sendsExactlyThisJson(Sent row) throws Exception {
        try (FakeDaemon fake = new FakeDaemon(sock, RsmapShellIT::answering)) {
            Run r = shell(row.env(), row.args().split(" "));
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(fake.received).hasSize(1);
            assertThat(fake.received.get(0).code()).isEqualTo(row.code());
            assertThat(fake.received.get(0).text(0)).isEqualTo(row.json());
        }
    }

    // --- usage ----------------------------------------------------------------------------------------------

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            # arguments                          | stderr (before " (rsmap-shell --help)")
            ``                                    | which command? realloc, release, cancel or status
            grow                                  | unknown command 'grow'
            realloc                               | realloc needs --add, --sub or --ids
            realloc --tag t1                      | realloc needs --add, --sub or --ids
            realloc --add                         | --add needs a value
            realloc --add x --add y               | --add is given twice
            realloc --add x --force               | realloc takes no option --force
            realloc --add x extra                 | realloc takes no argument 'extra'
            realloc --add x --tag a/b             | tag 'a/b' is not 1-64 characters of A-Z a-z 0-9 _ . : @ -
            realloc --add x --tag=                | tag '' is not 1-64 characters of A-Z a-z 0-9 _ . : @ -
            realloc --add x --tag TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT | tag 'TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT' is not 1-64 characters of A-Z a-z 0-9 _ . : @ -
            realloc --ids [1]                     | --ids is not a JSON object: it must start with '{'
            realloc --ids {"a":[}                 | --ids is not a JSON object: '}' closes '[' at byte 7
            realloc --ids {"a":1}}                | --ids is not a JSON object: '}' after its end at byte 8
            realloc --ids {"a":1                  | --ids is not a JSON object: it is not closed
            realloc --ids {"a                     | --ids is not a JSON object: a string is not closed
            release --add x                       | release takes no option --add
            release --tag t1                      | release takes no option --tag
            cancel                                | cancel needs the TAG of the realloc
            cancel t1 t2                          | cancel takes no argument 't2'
            cancel --ids {}                       | cancel takes no option --ids
            status --job=                         | --job is empty or longer than 511 bytes
            status now                            | status takes no argument 'now'
            """)
    void usageError_oneLine_exit2_sendsNothing(String args, String err) throws Exception {
        try (FakeDaemon fake = new FakeDaemon(sock, RsmapShellIT::answering)) {
            Run r = shell(job7(), args.isEmpty() ? new String[0] : args.split(" "));
            assertThat(r).isEqualTo(new Run(2, "", "rsmap-shell: " + err + " (rsmap-shell --help)\n"));
            assertThat(fake.received).isEmpty();
        }
    }

    @Test
    void noJob_usageError_exit2() throws Exception {
        assertThat(shell(Map.of("SGE_TASK_ID", "3"), "status")).isEqualTo(new Run(2, "",
                "rsmap-shell: no job: JOB_ID and SLURM_JOB_ID are not set (--job J) (rsmap-shell --help)\n"));
    }

    @Test
    void help_onStdout_exit0() throws Exception {
        for (String[] args : List.of(new String[] {"--help"}, new String[] {"realloc", "-h"})) {
            Run r = shell(Map.of(), args);
            assertThat(r.code()).isZero();
            assertThat(r.err()).isEmpty();
            assertThat(r.out()).startsWith("usage: rsmap-shell realloc [--add REQ] [--sub REQ] [--ids JSON] [--tag TAG] [--timeout S] [--job J]\n")
                    .contains("rsmap-shell release [--ids JSON] [--job J]\n", "rsmap-shell cancel TAG [--job J]\n",
                            "rsmap-shell status [--job J]\n");
        }
    }

    // --- set-group-ID, as packaging installs it -------------------------------------------------------------

    @Test
    void installedSetgid_reachesAGroupSocket_thenDropsTheGroupWhileItWaits() throws Exception {
        String user = ExecdCell.jobUser();
        Path dir = Files.createDirectories(tmp.resolve("libexec"));
        Path shell = Files.copy(SHELL, dir.resolve("rsmap-shell"));
        // group "daemon" stands for rsmap: the binary 2755, the socket 0660, as packaging and rsmapd make them
        ExecdCell.sh("chgrp daemon " + shell + " && chmod 2755 " + shell + " && chmod 755 " + tmp);
        String own = ExecdCell.sh("id -g " + user).strip();
        CountDownLatch looked = new CountDownLatch(1);
        try (FakeDaemon fake = new FakeDaemon(sock, c -> {
            try {
                looked.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return alloc(c, 0, "", "SGE_HGR_gpu=1");
        })) {
            ExecdCell.sh("chgrp daemon " + sock + " && chmod 660 " + sock);
            ProcessBuilder pb = new ProcessBuilder("setpriv", "--reuid=" + user, "--regid=" + own, "--init-groups",
                    shell.toString(), "realloc", "--add", "gpu=1");
            pb.environment().clear();
            pb.environment().putAll(Map.of("RSMAP_SOCKET", sock.toString(), "JOB_ID", "7"));
            Process p = pb.start();
            Polls.await(Duration.ofSeconds(5), () -> !fake.received.isEmpty());
            assertThat(fake.received).as("it reached the 0660 socket").hasSize(1);
            String gids = Files.readAllLines(Path.of("/proc", Long.toString(p.pid()), "status")).stream()
                    .filter(l -> l.startsWith("Gid:")).findFirst().orElseThrow();
            looked.countDown();
            assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();
            assertThat(gids.split("\\s+")).as("real, effective, saved, filesystem group while waiting")
                    .containsExactly("Gid:", own, own, own, own);
        } finally {
            looked.countDown();
        }
    }

    // --- the real daemon ------------------------------------------------------------------------------------

    @Test
    void status_realDaemon_printsTheJobsState() throws Exception {
        Config config = TestDaemon.config(tmp, "gpu=4(0 0 1 1)");
        try (Daemon daemon = TestDaemon.start(config)) {
            Map<String, String> env = new HashMap<>(Map.of("RSMAP_SOCKET", config.socket().toString(), "JOB_ID", "7",
                    "SGE_TASK_ID", "undefined", "NSLOTS", "1", "RSMAP_REQUEST", "gpu=2[same=id]", "USER", "alice"));
            ProcessBuilder prolog = new ProcessBuilder(ExecdCell.HOOK.toString(), "prolog");
            prolog.environment().putAll(env);
            Process p = prolog.start();
            assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).isZero();
            Run r = shell(env, "status");
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).startsWith("{").endsWith("}\n").hasLineCount(1)
                    .contains("\"job\":\"7\"", "\"env\":{\"SGE_HGR_gpu\":\"0 0\"}");
        }
    }
}
