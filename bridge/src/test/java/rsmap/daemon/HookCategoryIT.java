// The C clients decide by ERROR's category, never by its words (docs/protocol.md, "Error categories"): every
// category against the real rsmap-hook (prolog, starter, epilog) and rsmap-shell, each with reasons reworded
// every way - the words an old rule matched on, reversed, empty - and not one exit code moves.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(300)
class HookCategoryIT {
    /** category, prolog, starter, epilog, rsmap-shell status: the table of docs/protocol.md. */
    static final Object[][] TABLE = {
        {"busy", 99, 99, 1, 2},
        {"refused", 100, 100, 1, 2},
        {"denied", 99, 100, 1, 2},
        {"malformed", 100, 100, 1, 2},
        {"unavailable", 99, 99, 1, 1},
        {"internal", 99, 99, 1, 1},
    };

    /**
     * Reasons as rsmapd might word them, including the very words the hook matched before the categories
     * ("request:" meant 100, "filter: job filter fails on" meant 99) and the same reversed.
     */
    static final List<String> WORDINGS = List.of(
            "request: column 7: scope= needs same=",
            "filter: job filter fails on node01: cpu_speed=1800MHz does not satisfy cpu_speed > 2GHz",
            "filter: column 3: filter ends where a value is expected",
            "job 7 cannot be granted now: gpu: no group large enough",
            new StringBuilder("request: column 7: scope= needs same=").reverse().toString(),
            "x");

    @RegisterExtension
    static final HookBuild build = new HookBuild("running the starter as the job user");
    int fakes;

    private Map<String, String> env(String socket) {
        return new HashMap<>(Map.of("JOB_ID", "7", "SGE_TASK_ID", "undefined", "RSMAP_SOCKET", socket,
                "RSMAP_REQUEST", "gpu=1", "USER", build.user()));
    }

    /** Exit codes of prolog, starter, epilog and rsmap-shell status against a daemon answering ERROR {@code args}. */
    private List<Integer> exits(String... args) throws Exception {
        String name = "fake" + (++fakes);
        List<String> script = new ArrayList<>(List.of("refuse"));
        script.addAll(List.of(args));
        String socket = build.fake(null, name, script.toArray(String[]::new)).toString();
        Map<String, String> env = env(socket);
        List<Integer> codes = new ArrayList<>();
        codes.add(HookBuild.run(null, List.of(build.hook().toString(), "prolog"), env).code());
        codes.add(HookBuild.run(build.user(), List.of(build.starter().toString(), "true"), env).code());
        codes.add(HookBuild.run(null, List.of(build.hook().toString(), "epilog"), env).code());
        codes.add(HookBuild.run(null, List.of(build.shell().toString(), "status"), env).code());
        return codes;
    }

    @Test
    void everyCategory_decidesEveryExit_whateverTheReasonSays() throws Exception {
        for (Object[] row : TABLE) {
            List<Integer> expected = List.of((Integer) row[1], (Integer) row[2], (Integer) row[3], (Integer) row[4]);
            for (String reason : WORDINGS) {
                assertThat(exits(reason, (String) row[0])).as("category %s, reason '%s': prolog, starter, epilog, "
                        + "rsmap-shell status", row[0], reason).isEqualTo(expected);
            }
        }
    }

    @Test
    void anErrorWithoutCategory_fromAnOlderDaemon_fallsBackToTheReasonsFirstWords() throws Exception {
        // The rule before the categories, kept for an rsmapd that sends one argument.
        assertThat(exits("request: column 7: scope= needs same=")).isEqualTo(List.of(100, 100, 1, 2));
        assertThat(exits("filter: column 3: filter ends where a value is expected")).isEqualTo(List.of(100, 100, 1, 2));
        assertThat(exits("filter: job filter fails on node01: x")).isEqualTo(List.of(99, 100, 1, 2));
        assertThat(exits("job 7 cannot be granted now: gpu: busy")).isEqualTo(List.of(99, 100, 1, 2));
    }

    @Test
    void aWordNotInTheList_fromANewerDaemon_isTreatedAsNoCategory() throws Exception {
        assertThat(exits("request: column 1: x", "sleepy")).isEqualTo(List.of(100, 100, 1, 2));
        assertThat(exits("cannot now", "sleepy")).isEqualTo(List.of(99, 100, 1, 2));
    }
}
