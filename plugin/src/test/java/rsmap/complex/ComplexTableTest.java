// The complex table: the qconf -sc format and the rules Grid Engine's RSMAP manual adds for resource maps.
package rsmap.complex;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.Fixtures.assertRefused;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.Fixtures;
import rsmap.ParseException;

class ComplexTableTest {

    /** seed sentence | line | problem fragment (empty when the line is valid) | column. */
    static Stream<Arguments> lines() {
        return Stream.of(
                Arguments.of("gpu gpu RSMAP <= YES HOST 0 0: the definition of the seed",
                        "gpu gpu RSMAP <= YES HOST 0 0", "", 0),
                Arguments.of("consumable : YES, JOB or HOST", "g g RSMAP <= YES YES 0 0", "", 0),
                Arguments.of("consumable : YES, JOB or HOST", "g g RSMAP <= YES JOB 0 0", "", 0),
                Arguments.of("consumable : YES, JOB or HOST, never NO", "g g RSMAP <= YES NO 0 0",
                        "never NO", 18),
                Arguments.of("relop : <=. ... EXCL is reserved for booleans", "g g RSMAP EXCL YES HOST 0 0",
                        "must have relop <=", 11),
                Arguments.of("relop : <=.", "g g RSMAP == YES HOST 0 0", "must have relop <=", 11),
                Arguments.of("relop : <=.", "g g RSMAP >= YES HOST 0 0", "must have relop <=", 11),
                Arguments.of("a consumable must be <= or EXCL", "m m MEMORY >= YES YES 0 0",
                        "a consumable must have relop <= or EXCL", 12),
                Arguments.of("EXCL is reserved for booleans", "e e INT EXCL YES YES 0 0", "EXCL is for BOOL", 9),
                Arguments.of("EXCL is reserved for booleans", "e e BOOL EXCL YES YES 0 0", "", 0),
                Arguments.of("issue 2: types INT ... RSMAP", "x x FLOAT == YES NO 0 0", "unknown type", 5),
                Arguments.of("issue 2: qconf -sc text format", "x x INT ~= YES NO 0 0", "unknown relop", 9),
                Arguments.of("issue 2: qconf -sc text format", "x x INT == MAYBE NO 0 0",
                        "requestable must be", 12),
                Arguments.of("issue 2: qconf -sc text format", "x x INT == YES SOMETIMES 0 0",
                        "consumable must be", 16),
                Arguments.of("issue 2: qconf -sc text format", "x x INT == YES NO 0", "missing column 'urgency'", 20),
                Arguments.of("issue 2: qconf -sc text format", "x x INT == YES NO abc 0", "is not an INT", 19),
                Arguments.of("issue 2: qconf -sc text format", "x x INT == YES NO 0 high", "urgency must be", 21),
                Arguments.of("complex(5): strings compare with == or !=", "s s STRING <= YES NO NONE 0",
                        "compares with == or !=", 12),
                Arguments.of("complex(5): a string is not a consumable", "s s STRING == YES YES NONE 0",
                        "cannot be consumable", 19),
                Arguments.of("open cluster scheduler 12 columns", "x x INT <= YES NO 0 0 NO 0 YES NO", "", 0),
                Arguments.of("open cluster scheduler 12 columns", "x x INT <= YES NO 0 0 NO 0 YES NO extra",
                        "unexpected column", 35),
                Arguments.of("issue 2: # comments", "x x INT <= YES NO 0 0 # trailing comment", "", 0),
                Arguments.of("names", "9x x INT <= YES NO 0 0", "invalid name", 1));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("lines")
    void parse_line_acceptsOrRefusesAsTheRuleSays(String seed, String line, String problem, int column)
            throws ParseException {
        if (problem.isEmpty()) {
            assertThat(ComplexTable.parse(line).complexes()).hasSize(1);
        } else {
            assertRefused(() -> ComplexTable.parse(line), column, problem);
        }
    }

    @Test
    void parse_duplicateName_isRefused() {
        // "Duplicate names or shortcuts are refused."
        ParseException e = assertRefused(() -> ComplexTable.parse("a a INT <= YES NO 0 0\na b INT <= YES NO 0 0\n"),
                1, "already defined by complex 'a'");
        assertThat(e.line()).isEqualTo(2);
    }

    @Test
    void parse_duplicateShortcut_isRefused() {
        assertRefused(() -> ComplexTable.parse("a s INT <= YES NO 0 0\nb s INT <= YES NO 0 0\n"), 3,
                "already defined by complex 'a'");
    }

    @Test
    void parse_nameEqualToAnotherShortcut_isRefused() {
        assertRefused(() -> ComplexTable.parse("a s INT <= YES NO 0 0\ns t INT <= YES NO 0 0\n"), 1,
                "already defined by complex 'a'");
    }

    @Test
    void parse_commentsAndBlankLines_areIgnored() throws ParseException {
        ComplexTable t = ComplexTable.parse("# header\n\n   \n#----\ngpu gpu RSMAP <= YES HOST 0 0\n");
        assertThat(t.complexes()).extracting(Complex::name).containsExactly("gpu");
    }

    @Test
    void find_byNameOrShortcut_findsTheSameComplex() {
        assertThat(Fixtures.TABLE.find("gmem")).isEqualTo(Fixtures.TABLE.find("memory"));
        assertThat(Fixtures.TABLE.find("nothing")).isEmpty();
    }

    @Test
    void toString_reparses_toAnEqualTable() throws ParseException {
        ComplexTable again = ComplexTable.parse(Fixtures.TABLE.toString());
        assertThat(again.complexes()).isEqualTo(Fixtures.TABLE.complexes());
    }

    @Test
    void parse_keywordsInAnyCase_areAccepted() throws ParseException {
        Complex c = ComplexTable.parse("g g rsmap <= yes host 0 0").complexes().get(0);
        assertThat(c.type()).isEqualTo(ValueType.RSMAP);
        assertThat(c.consumable()).isEqualTo(Consumable.HOST);
    }
}
