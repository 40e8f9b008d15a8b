// The names a job start checks, hand-written for speed: each accepts exactly what its documented pattern
// accepts (docs/protocol.md's "host", "user", "job", "task"; the journal's HOST:JOB.TASK), on seeded random text.
package rsmap.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.Optional;
import java.util.Random;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import rsmap.daemon.state.JobId;

class NamesTest {
    /** The patterns as the docs give them: the oracle. */
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,252}");
    private static final Pattern USER = Pattern.compile("[A-Za-z0-9_.][A-Za-z0-9_.@$-]{0,63}");
    private static final Pattern JOB = Pattern.compile("[A-Za-z0-9_+-]{1,100}");
    private static final Pattern TASK = Pattern.compile("[0-9]{1,10}");
    private static final Pattern TEXT = Pattern.compile("(?:(" + HOST.pattern() + "):)?(" + JOB.pattern()
            + ")(?:\\.(" + TASK.pattern() + "))?");
    /** Every class the patterns tell apart, and what none of them takes (space, NUL, non-ASCII letters). */
    private static final String ALPHABET = "aZ09_.-+:@$ \0\n\u00e9\u0660/";

    @Test
    void table_boundaries() {
        Object[][] rows = {
            // name check, text, accepted
            {"host", "", false}, {"host", "a", true}, {"host", "_a.b-c", true}, {"host", ".a", false},
            {"host", "-a", false}, {"host", "a".repeat(253), true}, {"host", "a".repeat(254), false},
            {"host", "a b", false}, {"host", "\u00e9", false},
            {"user", ".x", true}, {"user", "x@y$-", true}, {"user", "@x", false}, {"user", "u".repeat(64), true},
            {"user", "u".repeat(65), false},
            {"job", "+-_", true}, {"job", "7.3", false}, {"job", "j".repeat(100), true}, {"job", "j".repeat(101), false},
            {"task", "0", true}, {"task", "1".repeat(10), true}, {"task", "1".repeat(11), false},
            {"task", "\u0660", false}, // Arabic-Indic zero: a digit to Character.isDigit, not to the pattern
        };
        for (Object[] row : rows) {
            assertThat(check((String) row[0]).test((String) row[1])).as(row[0] + " '" + row[1] + "'").isEqualTo(row[2]);
        }
    }

    @Test
    void eachCheck_acceptsWhatItsPatternAccepts_onRandomText() {
        long seed = System.nanoTime();
        Random r = new Random(seed);
        Object[][] pairs = {{"host", HOST}, {"user", USER}, {"job", JOB}, {"task", TASK}};
        for (int i = 0; i < 20_000; i++) {
            String s = random(r);
            for (Object[] p : pairs) {
                assertThat(check((String) p[0]).test(s)).as("seed %d, %s '%s'", seed, p[0], s)
                        .isEqualTo(((Pattern) p[1]).matcher(s).matches());
            }
        }
    }

    @Test
    void jobIdParse_readsWhatThePatternReads_onRandomText() {
        long seed = System.nanoTime();
        Random r = new Random(seed);
        for (int i = 0; i < 20_000; i++) {
            String s = random(r);
            Matcher m = TEXT.matcher(s);
            Optional<JobId> expected = m.matches() ? Optional.of(new JobId(m.group(1) == null ? "" : m.group(1),
                    m.group(2), m.group(3) == null ? "" : m.group(3))) : Optional.empty();
            assertThat(JobId.parse(s)).as("seed %d, '%s'", seed, s).isEqualTo(expected);
        }
    }

    /** Any text: nothing but empty or the id whose canonical text it is, and the pattern agrees. */
    @FuzzTest
    void jobIdParse_anyText_emptyOrItsCanonicalText(FuzzedDataProvider data) {
        String text = data.consumeRemainingAsString();
        Optional<JobId> id = JobId.parse(text);
        assertThat(id.map(JobId::toString)).isEqualTo(TEXT.matcher(text).matches() ? Optional.of(text) : Optional.empty());
    }

    /** Mostly short texts, some at the length limits; many of them valid so both sides are exercised. */
    private static String random(Random r) {
        int[] lengths = {0, 1, 2, 3, 5, 8, 12, 64, 65, 100, 101, 253, 254};
        int n = r.nextInt(4) == 0 ? lengths[r.nextInt(lengths.length)] : r.nextInt(14);
        boolean plain = r.nextInt(3) == 0;
        StringBuilder b = new StringBuilder(n);
        for (int k = 0; k < n; k++) {
            b.append(plain && r.nextInt(8) != 0 ? "a1".charAt(r.nextInt(2)) : ALPHABET.charAt(r.nextInt(ALPHABET.length())));
        }
        return b.toString();
    }

    private static Predicate<String> check(String name) {
        switch (name) {
            case "host":
                return Names::host;
            case "user":
                return Names::user;
            case "job":
                return Names::job;
            default:
                return Names::task;
        }
    }
}
