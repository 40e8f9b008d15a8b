// Jazzer fuzz tests for the Flux formats: Idset, Hostlist, Jobspec and R parsers throw only
// ParseException, and what parses re-encodes to an equal value; an R read back as a grant
// (RDelta.grantOf) also throws only ParseException. Regression mode over
// FluxFormatsFuzzTestInputs/<method>/ in the test resources unless JAZZER_FUZZ is set.
package rsmap.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import rsmap.Fixtures;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Grant;
import rsmap.flux.Hostlist;
import rsmap.flux.Idset;
import rsmap.flux.Jobspec;
import rsmap.flux.R;
import rsmap.map.ComplexValues;
import rsmap.realloc.RDelta;

class FluxFormatsFuzzTest {
    /** Hosts the seeds name (node01, n1...), so that some R resolve and some do not. */
    private static final Cluster CLUSTER = cluster();

    private static Cluster cluster() {
        Cluster c = new Cluster(Fixtures.TABLE);
        try {
            c.configure("node01", ComplexValues.parse("gpu=4(0 0 GPU-5f2c 3),nic=1(ib0)", Fixtures.TABLE), 0);
            c.configure("n1", ComplexValues.parse("gpu=2(a b)", Fixtures.TABLE), 0);
        } catch (ParseException e) {
            throw new IllegalStateException(e);
        }
        return c;
    }

    @FuzzTest
    void parseIdset_anyText_roundTripsOrThrowsParseException(byte[] data) {
        String text = ParserFuzzTest.text(data);
        Idset s;
        try {
            s = Idset.parse(text);
        } catch (ParseException e) {
            checkError(e, text);
            return;
        }
        assertThat(again(() -> Idset.parse(s.toString()), s.toString())).isEqualTo(s);
        assertThat(s.union(s)).isEqualTo(s);
        assertThat(s.difference(s).isEmpty()).isTrue();
    }

    @FuzzTest
    void parseHostlist_anyText_roundTripsOrThrowsParseException(byte[] data) {
        String text = ParserFuzzTest.text(data);
        Hostlist h;
        try {
            h = Hostlist.parse(text);
        } catch (ParseException e) {
            checkError(e, text);
            return;
        }
        assertThat(again(() -> Hostlist.parse(h.toString()), h.toString())).isEqualTo(h);
    }

    @FuzzTest
    void parseJobspec_anyText_roundTripsOrThrowsParseException(byte[] data) {
        String text = ParserFuzzTest.text(data);
        Jobspec j;
        try {
            j = Jobspec.parse(text);
        } catch (ParseException e) {
            checkError(e, text);
            return;
        }
        assertThat(again(() -> Jobspec.parse(j.toString()), j.toString())).isEqualTo(j);
    }

    @FuzzTest
    void parseR_anyText_roundTripsOrThrowsParseException(byte[] data) {
        String text = ParserFuzzTest.text(data);
        R r;
        try {
            r = R.parse(text);
        } catch (ParseException e) {
            checkError(e, text);
            return;
        }
        assertThat(again(() -> R.parse(r.toString()), r.toString())).isEqualTo(r);
        assertThat(r.union(r)).isEqualTo(r.union(r).union(r));
        assertThat(r.difference(r).isEmpty()).isTrue();
        Grant g;
        try {
            g = RDelta.grantOf(r, CLUSTER);
        } catch (ParseException e) {
            assertThat(e.problem()).startsWith("$.");
            assertThat(e.input()).isEqualTo(r.toString());
            return;
        }
        assertThat(g.isEmpty()).isEqualTo(r.byRank().values().stream()
                .allMatch(children -> children.keySet().stream().allMatch("core"::equals)));
    }

    private static void checkError(ParseException e, String input) {
        assertThat(e.input()).isEqualTo(input);
        assertThat(e.offset()).isBetween(0, input.length());
        assertThat(e.problem()).isNotBlank();
        assertThat(e.caretLine()).endsWith("^");
    }

    private interface Parse<T> {
        T run() throws ParseException;
    }

    private static <T> T again(Parse<T> parse, String canonical) {
        try {
            return parse.run();
        } catch (ParseException e) {
            throw new AssertionError("canonical form refused: " + canonical + ": " + e.getMessage(), e);
        }
    }
}
