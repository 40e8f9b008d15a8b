// RFC 22 idsets and RFC 29 hostlists: the specs' sentences and test vectors as one table each.
package rsmap.flux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import rsmap.ParseException;

class IdsetTest {
    /** input | canonical form, or "!column:fragment" for a refusal | the sentence it checks. */
    static final String[][] IDSETS = {
        {"1,2,3,5,6,42", "1-3,5-6,42", "RFC 22: ids in ascending numerical order, delimited by commas"},
        {"1-3,5-6,42", "1-3,5-6,42", "RFC 22: consecutive ids MAY be compressed into hyphenated ranges"},
        {"[1-3,5-6,42]", "1-3,5-6,42", "RFC 22: MAY be surrounded by square brackets"},
        {"", "", "the empty set"},
        {"[]", "", "the empty set in brackets"},
        {"0", "0", "zero is an id, not a leading zero"},
        {"3-3", "3", "a range of one id"},
        {"1-3,4", "1-4", "adjacent ranges print as one"},
        {"0-4294967295", "0-4294967295", "the largest set: two numbers, not four billion"},
        {"4294967296", "!1:above 4294967295", "ids are unsigned 32-bit, as Flux's"},
        {"01", "!1:leading zero", "RFC 22: SHALL NOT include leading zeroes"},
        {"1-02", "!3:leading zero", "RFC 22: SHALL NOT include leading zeroes"},
        {"3,1", "!3:ascend", "RFC 22: ascending numerical order"},
        {"1,1", "!3:ascend", "RFC 22: unique ids"},
        {"1-5,3", "!5:ascend", "RFC 22: unique ids"},
        {"5-1", "!3:goes down", "a range goes up"},
        {"[1-3", "!5:close", "brackets pair"},
        {"1-3]", "!4:expected ','", "brackets pair"},
        {"1,", "!3:after ','", "no empty element"},
        {",1", "!1:decimal id", "no empty element"},
        {"1 2", "!2:expected ','", "RFC 22: only digits, comma, hyphen and brackets"},
        {"a", "!1:decimal id", "RFC 22: only digits, comma, hyphen and brackets"},
        {"١", "!1:decimal id", "Arabic-Indic digits are not decimal digits here"},
        {"99999999999999999999", "!1:above", "no overflow"},
    };

    @Test
    void parse_table_givesCanonicalFormOrRefusal() {
        for (String[] row : IDSETS) {
            check(row, Idset::parse);
        }
    }

    /** input | canonical form or refusal | RFC 29 sentence or test vector. */
    static final String[][] HOSTLISTS = {
        {"", "", "RFC 29 vector: \"\" = \"\""},
        {"foox,fooy,fooz", "foox,fooy,fooz", "RFC 29 vector"},
        {"[1-3,5-6]", "[1-3,5-6]", "RFC 29 vector: 1,2,3,5,6"},
        {"foo[1-5]", "foo[1-5]", "RFC 29 vector"},
        {"foo[0-4]-eth2", "foo0-eth2,foo1-eth2,foo2-eth2,foo3-eth2,foo4-eth2",
            "RFC 29 vector; the canonical form splits at trailing digits, as Flux does"},
        {"foo1,foo1,foo1", "foo[1,1,1]", "RFC 29 vector: repeats kept"},
        {"[00-02]", "[00-02]", "RFC 29 vector"},
        {"[00-2]", "[00-02]", "RFC 29 vector: the padding of the first id applies to all"},
        {"foo[1,1,2,1]", "foo[1,1-2,1]", "RFC 29 vector: order and repeats kept"},
        {"node186,node187,node188,node189", "node[186-189]", "issue 13: node[186-189]"},
        {"node[08-11]", "node[08-11]", "10 and 11 fit the width of 08"},
        {"node8,node9,node10", "node[8-10]", "unpadded"},
        {"node[3,2,1]", "node[3,2,1]", "order kept"},
        {"a[1-2],b[1-2],a3", "a[1-2],b[1-2],a3", "order kept across prefixes"},
        {"node09,node10,node9", "node[09-10],node9", "9 cannot print at width 2"},
        {"n1x,n2x", "n1x,n2x", "a suffix is part of the prefix of the trailing digits (none here)"},
        {"a,,b", "!3:expected a host", "no empty item"},
        {"a,", "!3:after ','", "no empty item"},
        {"a[1-2", "!2:without ']'", "brackets pair"},
        {"a]1", "!2:may not appear", "RFC 29: no brackets in a prefix"},
        {"a[1][2]", "!5:one bracket", "one idlist per expression"},
        {"a[]", "!3:empty brackets", "an idlist has ids"},
        {"a[2-1]", "!5:goes down", "ranges go up"},
        {"a[1-03]", "!5:leading zeros", "RFC 29: padding comes from the first id"},
        {"a b", "!2:may not appear", "RFC 29: non-whitespace"},
        {"a[0-4294967295]", "!3:more than 65536 hosts", "expansion is bounded before allocating"},
    };

    @Test
    void hostlist_table_givesCanonicalFormOrRefusal() {
        for (String[] row : HOSTLISTS) {
            check(row, Hostlist::parse);
        }
    }

    @Test
    void hostlist_vectors_expandAsTheRfcSays() throws ParseException {
        assertThat(Hostlist.parse("[00-2]").hosts()).containsExactly("00", "01", "02");
        assertThat(Hostlist.parse("foo[0-4]-eth2").hosts()).startsWith("foo0-eth2", "foo1-eth2").hasSize(5);
        assertThat(Hostlist.parse("foo[1,1,2,1]").hosts()).containsExactly("foo1", "foo1", "foo2", "foo1");
        assertThat(Hostlist.parse("[1-3,5-6]").hosts()).containsExactly("1", "2", "3", "5", "6");
    }

    @Test
    void idset_hugeRanges_costNothing() throws ParseException {
        Idset all = Idset.parse("0-4294967295");
        assertThat(all.size()).isEqualTo(1L << 32);
        Idset holes = all.difference(Idset.parse("1,3,5-4294967294"));
        assertThat(holes).hasToString("0,2,4,4294967295");
        assertThat(all.contains(4294967295L)).isTrue();
        assertThat(holes.ids().limit(3).boxed().toList()).containsExactly(0L, 2L, 4L);
        assertThatThrownBy(() -> Idset.range(0, Idset.MAX_ID + 1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(Idset.of(5, 1, 2, 3)).hasToString("1-3,5");
        assertThat(Idset.of()).isEqualTo(Idset.empty());
        assertThat(List.of(Idset.parse("[0-3]").first(), Idset.parse("0-3").last())).containsExactly(0L, 3L);
    }

    interface Parser {
        Object parse(String s) throws ParseException;
    }

    static void check(String[] row, Parser parser) {
        String input = row[0];
        String expected = row[1];
        try {
            Object v = parser.parse(input);
            assertThat(expected).as("'%s' accepted as %s; %s", input, v, row[2]).doesNotStartWith("!");
            assertThat(v).as("'%s': %s", input, row[2]).hasToString(expected);
            assertThat(parser.parse(v.toString())).as("'%s' reparses", v).isEqualTo(v);
        } catch (ParseException e) {
            assertThat(expected).as("'%s' refused: %s; %s", input, e.getMessage(), row[2]).startsWith("!");
            int colon = expected.indexOf(':');
            assertThat(e.getMessage()).as("'%s': %s", input, row[2])
                    .startsWith("column " + expected.substring(1, colon) + ":")
                    .contains(expected.substring(colon + 1));
        }
    }
}
