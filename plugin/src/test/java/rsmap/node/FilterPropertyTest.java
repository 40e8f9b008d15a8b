// Property tests of node filters with a seeded generator: parse(toString(x)) == x, any spelling of a tree
// parses to it, evaluation agrees with its explanation, and hostile input only ever yields ParseException.
package rsmap.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import rsmap.Limits;
import rsmap.ParseException;

class FilterPropertyTest {
    private static final long SEED = Long.getLong("rsmap.seed", 20261215L);
    private static final int RUNS = 2000;
    private static final String NASTY = "()[]!=<>&|\",\\ \n\t.-0123456789GHzin\u0000\u00a0\u00ff\uffff\ud800\udc00";

    @Test
    void canonicalForm_reparsesToAnEqualFilter() {
        Random rnd = new Random(SEED);
        for (int run = 0; run < RUNS; run++) {
            Filter f = Filter.of(FilterGenerators.condition(rnd, 4));
            String canonical = f.toString();
            try {
                Filter again = Filter.parse(canonical);
                assertThat(again).as("seed %d run %d: %s", SEED, run, canonical).isEqualTo(f);
                assertThat(again.toString()).isEqualTo(canonical);
            } catch (ParseException e) {
                fail("seed %d run %d: canonical form refused: %s\n%s", SEED, run, e.getMessage(), canonical);
            }
        }
    }

    @Test
    void anySpelling_parsesToTheSameTree() {
        Random rnd = new Random(SEED + 1);
        for (int run = 0; run < RUNS; run++) {
            Condition c = FilterGenerators.condition(rnd, 4);
            String text = FilterGenerators.scruffy(rnd, c);
            try {
                assertThat(Filter.parse(text).root()).as("seed %d run %d: %s", SEED, run, text).isEqualTo(c);
            } catch (ParseException e) {
                fail("seed %d run %d: refused: %s\n%s", SEED, run, e.getMessage(), text);
            }
        }
    }

    /** The verdict agrees with test(), and the named comparison explains the outcome. */
    @Test
    void evaluate_agreesWithTestAndItsWitness() {
        Random rnd = new Random(SEED + 2);
        List<Node> nodes = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            nodes.add(FilterGenerators.node(rnd, i));
        }
        for (int run = 0; run < RUNS / 4; run++) {
            Filter f = Filter.of(FilterGenerators.condition(rnd, 3));
            for (Node n : nodes) {
                Verdict v = f.evaluate(n);
                assertThat(v.passed()).as("seed %d run %d: %s on %s", SEED, run, f, n).isEqualTo(f.test(n));
                v.failure().ifPresent(x -> {
                    boolean held = x.comparison().test(n);
                    assertThat(x.why()).contains(held ? "which the filter negates" : "does not satisfy");
                    assertThat(x.attribute()).isEqualTo(x.comparison().attribute());
                });
            }
        }
    }

    /** != is the negation of ==, and a missing attribute fails every other operator (docs/filters.md). */
    @Test
    void notEqual_isAlwaysTheNegationOfEqual() {
        Random rnd = new Random(SEED + 3);
        for (int run = 0; run < RUNS; run++) {
            Comparison c = FilterGenerators.comparison(rnd);
            if (c.op() != Op.EQ) {
                continue;
            }
            Comparison ne = new Comparison(c.attribute(), Op.NE, c.literals());
            Node n = FilterGenerators.node(rnd, run);
            assertThat(ne.test(n)).as("%s vs %s on %s", c, ne, n).isEqualTo(!c.test(n));
            if (!c.isHost() && n.attributes().get(c.attribute()).isEmpty()) {
                for (Op op : Op.values()) {
                    Comparison other = new Comparison(c.attribute(), op, c.literals());
                    assertThat(other.test(n)).as(other.toString()).isEqualTo(op == Op.NE);
                }
            }
        }
    }

    @Test
    void mutatedInput_onlyEverYieldsParseException() {
        Random rnd = new Random(SEED + 4);
        for (int run = 0; run < RUNS * 2; run++) {
            String base = FilterGenerators.condition(rnd, 3).toString();
            StringBuilder b = new StringBuilder(base);
            int n = 1 + rnd.nextInt(4);
            for (int k = 0; k < n && b.length() > 0; k++) {
                int at = rnd.nextInt(b.length());
                switch (rnd.nextInt(5)) {
                    case 0 -> b.setLength(at);
                    case 1 -> b.insert(at, NASTY.charAt(rnd.nextInt(NASTY.length())));
                    case 2 -> b.deleteCharAt(at);
                    case 3 -> b.setCharAt(at, (char) rnd.nextInt(0x3000));
                    default -> b.insert(at, "(".repeat(1 + rnd.nextInt(80)));
                }
            }
            onlyParseException(b.toString(), "seed " + SEED + " run " + run);
        }
    }

    @Test
    void hostileInput_deepHugeLongBinary_onlyEverYieldsParseException() {
        Random rnd = new Random(SEED + 5);
        int mib = 1 << 20;
        byte[] binary = new byte[4096];
        rnd.nextBytes(binary);
        List<String> inputs = List.of(
                "(".repeat(mib) + "a == 1" + ")".repeat(mib),
                "!".repeat(mib) + "a == 1",
                "!(".repeat(40) + "a == 1" + ")".repeat(40),
                "a == 1 && ".repeat(mib / 10) + "a == 1",
                "a in [" + "1, ".repeat(mib / 3) + "1]",
                "a == \"" + "x".repeat(mib) + "\"",
                "a == \"" + "x".repeat(4000) + "\"",
                "a == " + "9".repeat(4000),
                "a == " + "9".repeat(mib),
                "a".repeat(mib) + " == 1",
                "a == 1.1" + ".1".repeat(mib / 2),
                "a == 1" + "0".repeat(308) + "T",
                "a == \"\u0000\"",
                "\u0000",
                "a\u0000== 1",
                "a == \"\ud83d\"",
                "a == \"\udc00\"",
                "\ud83d\ude00 == 1",
                "a == \"" + "\\".repeat(1001) + "\"",
                new String(binary, StandardCharsets.ISO_8859_1),
                new String(binary, StandardCharsets.UTF_8),
                "x".repeat(5 * mib));
        for (String in : inputs) {
            onlyParseException(in, "hostile input of " + in.length() + " chars");
        }
    }

    private static void onlyParseException(String input, String what) {
        try {
            Filter f = Filter.parse(input, Limits.DEFAULT);
            assertThat(Filter.parse(f.toString())).isEqualTo(f);
        } catch (ParseException e) {
            assertThat(e.getMessage()).isNotBlank().doesNotContain("\n");
            assertThat(e.offset()).isBetween(0, input.length());
        } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
            throw new AssertionError(what + ": " + e + " for input: "
                    + input.substring(0, Math.min(200, input.length())), e);
        }
    }
}
