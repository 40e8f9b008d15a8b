// Property tests with seeded random generators: canonical forms re-parse to equal models, expressions
// agree with an independent oracle, and hostile input only ever yields ParseException.
package rsmap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static rsmap.Fixtures.TABLE;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.map.DeviceList;
import rsmap.map.ResourceMap;
import rsmap.request.Expression;
import rsmap.request.RequestList;

class LanguagePropertyTest {
    private static final long SEED = Long.getLong("rsmap.seed", 20261202L);
    private static final int RUNS = 2000;
    private static final String NASTY = "[]()=,\\ \n\r\t!&|*?-:;#0123456789gpu\u0000\u00ff\uffff\ud800";

    @FunctionalInterface
    interface Parser {
        Object parse(String text) throws ParseException;
    }

    @Test
    void hostValue_canonicalForm_reparsesToAnEqualModel() throws ParseException {
        Random rnd = new Random(SEED);
        for (int run = 0; run < RUNS; run++) {
            String text = Generators.hostValue(rnd);
            try {
                ComplexValues v = ComplexValues.parse(text, TABLE);
                String canonical = v.toString();
                ComplexValues again = ComplexValues.parse(canonical, TABLE);
                assertThat(again).as("seed %d run %d: %s", SEED, run, text).isEqualTo(v);
                assertThat(again.toString()).isEqualTo(canonical);
                for (ResourceMap m : v.resourceMaps()) {
                    assertThat(canonical).contains(m.name() + "=" + m.amount() + "(");
                }
            } catch (ParseException e) {
                fail("seed %d run %d: generated value refused: %s\n%s", SEED, run, e.getMessage(), text);
            }
        }
    }

    @Test
    void request_canonicalForm_reparsesToAnEqualModel() {
        Random rnd = new Random(SEED + 1);
        for (int run = 0; run < RUNS; run++) {
            String text = Generators.request(rnd);
            try {
                RequestList r = RequestList.parse(text, TABLE);
                RequestList again = RequestList.parse(r.toString(), TABLE);
                assertThat(again).as("seed %d run %d: %s", SEED, run, text).isEqualTo(r);
                assertThat(again.toString()).isEqualTo(r.toString());
            } catch (ParseException e) {
                fail("seed %d run %d: generated request refused: %s\n%s", SEED, run, e.getMessage(), text);
            }
        }
    }

    @Test
    void expression_matches_agreesWithARegexOracle() throws ParseException {
        Random rnd = new Random(SEED + 2);
        String[] ids = {"", "a", "b", "ab", "ba", "gpu0", "gpu1a", "gpu1b", "gpu2a", "x.y", "a*", "aa", "abc"};
        for (int run = 0; run < RUNS; run++) {
            Generators.Expr tree = Generators.expr(rnd, 4);
            Expression full = Expression.parse(tree.full());
            Expression minimal = Expression.parse(tree.minimal(0));
            for (String id : ids) {
                boolean expected = tree.eval(id);
                assertThat(full.matches(id)).as("seed %d: %s ~ %s", SEED, tree.full(), id).isEqualTo(expected);
                assertThat(minimal.matches(id)).as("seed %d: %s ~ %s (precedence)", SEED, tree.minimal(0), id)
                        .isEqualTo(expected);
            }
        }
    }

    @Test
    void mutatedInput_onlyEverYieldsParseException() {
        Random rnd = new Random(SEED + 3);
        List<Parser> parsers = parsers();
        for (int run = 0; run < RUNS * 2; run++) {
            String base = switch (rnd.nextInt(3)) {
                case 0 -> Generators.hostValue(rnd);
                case 1 -> Generators.request(rnd);
                default -> Fixtures.TABLE_TEXT;
            };
            String mutated = mutate(rnd, base);
            for (Parser p : parsers) {
                onlyParseException(p, mutated, "seed " + SEED + " run " + run);
            }
        }
    }

    @Test
    void hostileInput_hugeBinaryNested_onlyEverYieldsParseException() {
        Random rnd = new Random(SEED + 4);
        int mib = 1 << 20;
        byte[] binary = new byte[4096];
        rnd.nextBytes(binary);
        List<String> inputs = List.of(
                "gpu=1(" + "a".repeat(mib) + ")",
                "gpu=" + "9".repeat(mib),
                "gpu=1(g[" + "memory=1G,".repeat(mib / 10) + "])",
                "gpu=1[id=" + "(".repeat(mib) + "a" + ")".repeat(mib) + "]",
                "gpu=1[id=" + "!".repeat(mib) + "a]",
                "gpu=1[id=" + "a|".repeat(mib / 2) + "a]",
                "gpu=1[" + "[".repeat(mib) + "]",
                "[".repeat(mib),
                "(".repeat(mib),
                "gpu=1(" + "0-1 ".repeat(mib / 4) + ")",
                "x".repeat(5 * mib),
                new String(binary, java.nio.charset.StandardCharsets.ISO_8859_1),
                new String(binary, java.nio.charset.StandardCharsets.UTF_8),
                "gpu=2(a \\\r\n\\\n\\",
                "gpu=1(a\\",
                "\\");
        for (String in : inputs) {
            for (Parser p : parsers()) {
                onlyParseException(p, in, "hostile input of " + in.length() + " chars");
            }
        }
    }

    private static List<Parser> parsers() {
        List<Parser> ps = new ArrayList<>();
        ps.add(ComplexTable::parse);
        ps.add(t -> ComplexValues.parse(t, TABLE));
        ps.add(t -> RequestList.parse(t, TABLE));
        ps.add(Expression::parse);
        ps.add(DeviceList::parse);
        return ps;
    }

    private static void onlyParseException(Parser p, String input, String what) {
        try {
            p.parse(input);
        } catch (ParseException e) {
            assertThat(e.getMessage()).isNotBlank().doesNotContain("\n");
        } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
            throw new AssertionError(what + ": " + e + " for input: "
                    + input.substring(0, Math.min(200, input.length())), e);
        }
    }

    private static String mutate(Random rnd, String base) {
        StringBuilder b = new StringBuilder(base);
        int n = 1 + rnd.nextInt(4);
        for (int k = 0; k < n && b.length() > 0; k++) {
            int at = rnd.nextInt(b.length());
            switch (rnd.nextInt(5)) {
                case 0 -> b.setLength(at); // truncated
                case 1 -> b.insert(at, NASTY.charAt(rnd.nextInt(NASTY.length())));
                case 2 -> b.deleteCharAt(at);
                case 3 -> b.setCharAt(at, (char) rnd.nextInt(0x3000));
                default -> b.insert(at, "[".repeat(1 + rnd.nextInt(80)));
            }
        }
        return b.toString();
    }

    /** Sanity check of the oracle itself. */
    @Test
    void oracle_globToRegex_translatesWildcards() {
        Function<String, Pattern> re = Generators::globRegex;
        assertThat(re.apply("a*b?").matcher("axxbz").matches()).isTrue();
        assertThat(re.apply("a.b").matcher("axb").matches()).isFalse();
    }
}
