// rsmap-place (C, bridge/target/rsmap-place) against `rsmap place` (Java): the same arguments give the same
// standard output and exit code, for every form of the answer (a filter, a request, alternatives; people,
// --json, --shell) and every kind of refusal, asked of one real authority to which two hosts registered.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.PlaceAuthority;

class PlaceClientIT {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    static final Path PLACE = ROOT.resolve("bridge/target/rsmap-place");

    @TempDir
    static Path tmp;
    static PlaceAuthority authority;
    static Path socket;

    record Outcome(int exit, String out, String err) {
    }

    @BeforeAll
    static void authorityWithTwoHosts() throws Exception {
        authority = PlaceAuthority.start(tmp.resolve("authority"), "lic=1(la)");
        socket = authority.socket();
    }

    @AfterAll
    static void stop() throws Exception {
        if (authority != null) {
            authority.close();
        }
    }

    static Outcome java(List<String> args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of("place"));
        all.addAll(args);
        int exit = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), all.toArray(new String[0]));
        return new Outcome(exit, out.toString(), err.toString());
    }

    static Outcome c(List<String> args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(PLACE.toString()));
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).start();
        assertThat(p.waitFor(40, TimeUnit.SECONDS)).as("rsmap-place ends within its 30 s bound").isTrue();
        return new Outcome(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    private static List<String> with(String... args) {
        List<String> all = new ArrayList<>(List.of("--socket", socket.toString()));
        all.addAll(List.of(args));
        return all;
    }

    /** Every answer and refusal of the authority, in each of the three forms of output. */
    @Test
    void everyAnswer_printsWhatRsmapPlacePrints_withItsExitCode() throws Exception {
        List<List<String>> cases = new ArrayList<>();
        String[][] asks = {
            {"--filter", "cpu_speed > 2GHz"},
            {"--filter", "arch == \"ppc64le\""},
            {"--filter", "cpu_speed >"},
            {"--filter", "no_such_attribute == 1"},
            {"--request", "gpu=2"},
            {"--request", "gpu=3"},
            {"--request", "gpu=1", "--slots", "2"},
            {"--request", "gpu=1", "--candidates", "node02"},
            {"--request", "gpu=1", "--candidates", "node01,node02", "--whole-hosts"},
            {"--request", "gpu=1", "--group", "arch", "--group-values", "aarch64,x86_64"},
            {"--request", "gpu=1[", "--slots", "1"},
            {"--request", "lic=1"},
            {"--alternatives", "[{\"request\":\"gpu=4\",\"slots\":1},{\"request\":\"gpu=2\",\"slots\":1}]"},
            {"--alternatives", "[{\"request\":\"gpu=9\",\"slots\":1}]"},
            {"--alternatives", "[{\"request\":\"gpu=1\",\"slots\":1}]", "--filter", "arch == \"aarch64\""},
            {"--alternatives", "{\"request\":\"gpu=1\"}"},
            {"--alternatives", "[{\"request\":"},
            {"--slots", "2"},
            {"--filter", "host in [\"nöde'1\", \"a\\\\b\"]"},
        };
        for (String[] ask : asks) {
            for (String form : new String[] {"", "--json", "--shell"}) {
                List<String> args = with(ask);
                if (!form.isEmpty()) {
                    args.add(form);
                }
                cases.add(args);
            }
        }
        for (List<String> args : cases) {
            Outcome j = java(args);
            Outcome n = c(args);
            assertThat(n.exit()).as("exit of %s (java said %s / %s)", args, j.out(), j.err()).isEqualTo(j.exit());
            assertThat(n.out()).as("stdout of %s", args).isEqualTo(j.out());
            if (j.exit() != 0 && j.exit() != 3) {
                assertThat(n.err()).as("one error line for %s", args).startsWith("error: ").hasLineCount(1);
            }
        }
    }

    /** Options a script gets wrong: refused with one line and exit 2, nothing asked. */
    @Test
    void usageErrors_areExit2_withOneLine() throws Exception {
        for (List<String> args : List.of(with(), with("--slots", "two", "--request", "gpu=1"), with("--bogus"),
                with("--filter"))) {
            Outcome n = c(args);
            assertThat(n.exit()).as("%s", args).isEqualTo(2).isEqualTo(java(args).exit());
            assertThat(n.err()).as("%s", args).startsWith("error: ").hasLineCount(1);
            assertThat(n.out()).isEmpty();
        }
    }

    /** No authority at the socket: exit 1 and, for scripts, the category unavailable - as rsmap place says. */
    @Test
    void noAuthority_isExit1_andUnavailableForScripts() throws Exception {
        List<String> args = List.of("--socket", tmp.resolve("none.sock").toString(), "--filter", "arch == \"x\"", "--json");
        Outcome n = c(args);
        Outcome j = java(args);
        assertThat(n.exit()).isEqualTo(1).isEqualTo(j.exit());
        assertThat(n.out()).contains("\"category\":\"unavailable\"").startsWith("{\"error\":");
        assertThat(j.out()).contains("\"category\":\"unavailable\"");
        List<String> shell = List.of("--socket", tmp.resolve("none.sock").toString(), "--filter", "arch == \"x\"", "--shell");
        assertThat(c(shell).out()).contains("category='unavailable'\n");
    }

    /**
     * Options whose PLACE argument is over the protocol's 1 MiB frame bound are never sent: both clients refuse
     * them as the job's (exit 2, category refused, the same bytes on stdout). One argument on a command line is
     * at most 128 KiB (Linux's MAX_ARG_STRLEN), so it takes JSON's escapes: a control character is six bytes.
     */
    @Test
    void anArgumentOverTheFrameBound_isRefusedUnsent_byBothClientsAlike() throws Exception {
        String escaped = "\u0001".repeat(100_000); // 600,000 bytes as JSON, twice
        for (String form : new String[] {"--json", "--shell"}) {
            List<String> args = with("--filter", "arch == \"" + escaped + "\"", "--request", "gpu=1" + escaped, form);
            Outcome j = java(args);
            Outcome c = c(args);
            assertThat(c.exit()).as("exit %s (java said %s)", form, j.err()).isEqualTo(j.exit()).isEqualTo(2);
            assertThat(c.out()).as("stdout %s", form).isEqualTo(j.out())
                    .contains(form.equals("--json") ? "\"category\":\"refused\"" : "category='refused'");
            assertThat(c.err()).startsWith("error: ").hasLineCount(1).contains("frame bound: not sent");
            assertThat(j.err()).startsWith("error: ").contains("frame bound: not sent");
        }
    }

    /**
     * Filters of random text (quotes, backslashes, blanks, non-ASCII): whatever the authority answers, both
     * clients print the same bytes - the quoting of --shell and the JSON of --json included (seeded).
     */
    @Test
    void randomFilters_printTheSameBytes() throws Exception {
        Random random = new Random(20261203L);
        String alphabet = "ab01 =<>!\"'\\[],.&|()éß";
        for (int i = 0; i < 40; i++) {
            StringBuilder f = new StringBuilder("arch == \"");
            int n = 1 + random.nextInt(12);
            for (int k = 0; k < n; k++) {
                f.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            if (random.nextBoolean()) {
                f.append('"');
            }
            List<String> args = with("--filter", f.toString(), random.nextBoolean() ? "--json" : "--shell");
            Outcome j = java(args);
            Outcome c = c(args);
            assertThat(c.exit()).as("exit of %s", args).isEqualTo(j.exit());
            assertThat(c.out()).as("stdout of %s", args).isEqualTo(j.out());
        }
    }
}
