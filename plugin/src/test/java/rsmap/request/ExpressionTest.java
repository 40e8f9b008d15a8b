// The types(1) expression behind id= and RESTRING: patterns, !, &, |, brackets, precedence.
package rsmap.request;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.Fixtures.assertRefused;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.ParseException;

class ExpressionTest {

    /** seed sentence | expression | identifier | matches. */
    static Stream<Arguments> matches() {
        return Stream.of(
                Arguments.of("qsub -l 'gpu=1[id=gpu0]' ... Exactly that instance.", "gpu0", "gpu0", true),
                Arguments.of("Exactly that instance.", "gpu0", "gpu01", false),
                Arguments.of("Exactly that instance.", "gpu0", "Gpu0", false),
                Arguments.of("Any instance whose identifier begins with gpu1.", "gpu1*", "gpu1a", true),
                Arguments.of("Any instance whose identifier begins with gpu1.", "gpu1*", "gpu1", true),
                Arguments.of("Any instance whose identifier begins with gpu1.", "gpu1*", "gpu2a", false),
                Arguments.of("Anything but gpu0", "!gpu0", "gpu1", true),
                Arguments.of("Anything but gpu0", "!gpu0", "gpu0", false),
                Arguments.of("and then the a shares of two cards", "(gpu1*|gpu2*)&!*b", "gpu1a", true),
                Arguments.of("and then the a shares of two cards", "(gpu1*|gpu2*)&!*b", "gpu2a", true),
                Arguments.of("and then the a shares of two cards", "(gpu1*|gpu2*)&!*b", "gpu1b", false),
                Arguments.of("and then the a shares of two cards", "(gpu1*|gpu2*)&!*b", "gpu3a", false),
                Arguments.of("types(1): ? matches any character, not no character", "gpu?", "gpu7", true),
                Arguments.of("types(1): ? ... cannot be no character", "gpu?", "gpu", false),
                Arguments.of("types(1): [...] a range of allowed characters", "gpu[0-3]", "gpu2", true),
                Arguments.of("types(1): [...]", "gpu[0-3]", "gpu4", false),
                Arguments.of("types(1): [...] an array", "gpu[02]", "gpu2", true),
                Arguments.of("types(1): [...] an array", "gpu[02]", "gpu1", false),
                Arguments.of("fnmatch: [!...] negates the class", "gpu[!0]", "gpu1", true),
                Arguments.of("fnmatch: [!...]", "gpu[!0]", "gpu0", false),
                Arguments.of("types(1): the caret is not a logical not", "gpu[^0]", "gpu^", true),
                Arguments.of("types(1): the caret is not a logical not", "gpu[^0]", "gpu1", false),
                Arguments.of("types(1): . is the character .", "a.b", "a.b", true),
                Arguments.of("types(1): . is the character .", "a.b", "axb", false),
                Arguments.of("types(1): \\* is *", "a\\*", "a*", true),
                Arguments.of("types(1): \\* is *", "a\\*", "ab", false),
                Arguments.of("types(1): (lx*|sol*)&*64*", "(lx*|sol*)&*64*", "lx-amd64", true),
                Arguments.of("types(1): (lx*|sol*)&*64*", "(lx*|sol*)&*64*", "sol-sparc", false),
                Arguments.of("types(1): rh_3*&!rh_3.1", "rh_3*&!rh_3.1", "rh_3.2", true),
                Arguments.of("types(1): rh_3*&!rh_3.1", "rh_3*&!rh_3.1", "rh_3.1", false),
                Arguments.of("precedence: & binds tighter than |", "a|b&c", "a", true),
                Arguments.of("precedence: a|(b&c)", "a|b&c", "b", false),
                Arguments.of("precedence: ! binds tightest", "!a&b", "b", true),
                Arguments.of("precedence: (!a)&b", "!a&b", "a", false),
                Arguments.of("double negation", "!!a", "a", true),
                Arguments.of("* matches none", "*", "", true),
                Arguments.of("multiple stars backtrack", "*a*b*c", "xxaxxbxxbxc", true),
                Arguments.of("multiple stars backtrack", "*a*b*c", "xxaxxbxxbx", false),
                Arguments.of("unicode", "g?", "gü", true));
    }

    @ParameterizedTest(name = "{1} ~ {2} = {3}")
    @MethodSource("matches")
    void matches_identifier_followsTypes1(String seed, String expr, String id, boolean expected)
            throws ParseException {
        assertThat(Expression.parse(expr).matches(id)).isEqualTo(expected);
    }

    /** An expression which does not parse is refused when the job is submitted. */
    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of("", "empty expression", 1),
                Arguments.of("(a|b", "'(' without a matching ')'", 1),
                Arguments.of("a|b)", "')' without a matching '('", 4),
                Arguments.of("a|", "expression ends where a pattern is expected", 3),
                Arguments.of("|a", "expected a pattern, found '|'", 1),
                Arguments.of("a&&b", "expected a pattern, found '&'", 3),
                Arguments.of("!", "expression ends where a pattern is expected", 2),
                Arguments.of("()", "expected a pattern, found ')'", 2),
                Arguments.of("gpu[01", "'[' without a matching ']'", 4),
                Arguments.of("gpu[3-1]", "runs backwards", 5),
                Arguments.of("a\\", "escapes nothing", 2),
                Arguments.of("a b", "whitespace in expression", 2),
                Arguments.of("a(b)", "unexpected '(' in expression", 2),
                Arguments.of("(".repeat(200) + "a" + ")".repeat(200), "nested deeper than 64", 65),
                Arguments.of("!".repeat(200) + "a", "nested deeper than 64", 65));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("refused")
    void parse_malformed_isRefused(String expr, String problem, int column) {
        assertRefused(() -> Expression.parse(expr), column, problem);
    }

    @Test
    void matches_pathologicalPattern_staysLinear() throws ParseException {
        // Backtracking only to the last star: a pattern built to explode a naive matcher answers at once.
        Expression e = Expression.parse("*a*a*a*a*a*a*a*a*a*a*b");
        assertThat(e.matches("a".repeat(5000))).isFalse();
    }

    @Test
    void toString_isTheTextAsWritten() throws ParseException {
        assertThat(Expression.parse("(gpu1*|gpu2*)&!*b")).hasToString("(gpu1*|gpu2*)&!*b");
    }
}
