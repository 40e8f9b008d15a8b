// A host's complex_values: every rule of Grid Engine's RSMAP manual "CONFIGURING A RESOURCE MAP ON A HOST" and
// "CHARACTERISTICS", as a table of accepted inputs (with their canonical form) and refusals.
package rsmap.map;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.Fixtures.TABLE;
import static rsmap.Fixtures.assertRefused;

import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.Limits;
import rsmap.ParseException;

class ComplexValuesTest {

    /** seed sentence | input | canonical form. */
    static Stream<Arguments> accepted() {
        return Stream.of(
                Arguments.of("qconf -mattr exechost complex_values \"gpu=2(gpu0 gpu1)\"", "gpu=2(gpu0 gpu1)",
                        "gpu=2(gpu0 gpu1)"),
                Arguments.of("an integer range (1-3, expanded to individual ids when it is read)", "gpu=3(1-3)",
                        "gpu=3(1-3)"),
                Arguments.of("an integer range ... expanded", "gpu=5(a 1-3 b)", "gpu=5(a 1-3 b)"),
                Arguments.of("The instances are then named 0 to amount-1, so this is equivalent to gpu=4(0-3), and it"
                        + " is stored and displayed in that longer form.", "gpu=4", "gpu=4(0-3)"),
                Arguments.of("issue 2: gpu=5(0 1 2 3 x) -> gpu=5(0-3 x)", "gpu=5(0 1 2 3 x)", "gpu=5(0-3 x)"),
                Arguments.of("issue 2: gpu=4(0 1 1 2) stays as it is", "gpu=4(0 1 1 2)", "gpu=4(0 1 1 2)"),
                Arguments.of("issue 2: gpu=2(0 1) stays as it is", "gpu=2(0 1)", "gpu=2(0 1)"),
                Arguments.of("issue 2: an ascending run", "gpu=3(2 1 0)", "gpu=3(2 1 0)"),
                Arguments.of("issue 2: runs of three or more", "gpu=6(0 1 2 5 6 7)", "gpu=6(0-2 5-7)"),
                Arguments.of("An amount of 0 means the host provides no instance at all.", "gpu=0", "gpu=0()"),
                Arguments.of("An amount of 0", "gpu=0()", "gpu=0()"),
                Arguments.of("gpu=8(0 0 0 0 1 1 1 1): two physical GPUs, each usable by four jobs",
                        "gpu=8(0 0 0 0 1 1 1 1)", "gpu=8(0 0 0 0 1 1 1 1)"),
                Arguments.of("gpu=2(gpu0[devices=/dev/nvidia0:rw,memory=80G] gpu1[devices=/dev/nvidia1:rw,memory=40G])",
                        "gpu=2(gpu0[devices=/dev/nvidia0:rw,memory=80G] gpu1[devices=/dev/nvidia1:rw,memory=40G])",
                        "gpu=2(gpu0[devices=/dev/nvidia0:rw,memory=80G] gpu1[devices=/dev/nvidia1:rw,memory=40G])"),
                Arguments.of("issue 2: characteristics sorted by name", "gpu=1(g[memory=1G,devices=/dev/x])",
                        "gpu=1(g[devices=/dev/x,memory=1G])"),
                Arguments.of("Repeating an identical annotation is accepted and deduplicated; order ignored",
                        "gpu=2(g[memory=1G,model=A] g[model=A,memory=1G])",
                        "gpu=2(g[memory=1G,model=A] g[memory=1G,model=A])"),
                Arguments.of("0[devices=/dev/nvidia0] is as good as gpu0[devices=/dev/nvidia0]",
                        "gpu=2(0[devices=/dev/nvidia0] 1[devices=/dev/nvidia1])",
                        "gpu=2(0[devices=/dev/nvidia0] 1[devices=/dev/nvidia1])"),
                Arguments.of("A range which covers one identifier may carry a block", "gpu=1(3-3[memory=1G])",
                        "gpu=1(3[memory=1G])"),
                Arguments.of("Whitespace inside the brackets is ignored, so a long definition can be continued with \\",
                        "complex_values gpu=2(gpu0[devices=/dev/nvidia0:rw,memory=80G,\\\n"
                                + "                          affinity_mask=SCCCCCCCCScccccccc] \\\n"
                                + "                     gpu1[devices=/dev/nvidia1:rw,memory=40G,\\\n"
                                + "                          affinity_mask=SccccccccSCCCCCCCC])",
                        "gpu=2(gpu0[affinity_mask=SCCCCCCCCScccccccc,devices=/dev/nvidia0:rw,memory=80G] "
                                + "gpu1[affinity_mask=SccccccccSCCCCCCCC,devices=/dev/nvidia1:rw,memory=40G])"),
                Arguments.of("whitespace inside brackets is ignored", "gpu=1(g[ memory = 1G , model=A ])",
                        "gpu=1(g[memory=1G,model=A])"),
                Arguments.of("continuation with CRLF", "gpu=2(a \\\r\nb)", "gpu=2(a b)"),
                Arguments.of("An identifier may contain any character except whitespace, ,, =, (, ), [ and ]",
                        "gpu=3(gpu:0 a/b.c-d_e ü*?!)", "gpu=3(gpu:0 a/b.c-d_e ü*?!)"),
                Arguments.of("A char-value may contain any byte except ,, ], whitespace, =, ( and )",
                        "gpu=1(g[aff=a[b:c;d/e])", "gpu=1(g[affinity_mask=a[b:c;d/e])"),
                Arguments.of("shortcut names resolve to the complex", "gpu=1(g[gmem=1G])", "gpu=1(g[memory=1G])"),
                Arguments.of("devices: a path written without a mode is granted read access",
                        "gpu=1(g[devices=/dev/nvidia0;/dev/nvidiactl:r])",
                        "gpu=1(g[devices=/dev/nvidia0;/dev/nvidiactl:r])"),
                Arguments.of("other complexes in complex_values", "mem_free=64G,gpu=2", "mem_free=64G,gpu=2(0 1)"),
                Arguments.of("configured order is kept", "nic=1(ib0),gpu=1(x)", "nic=1(ib0),gpu=1(x)"),
                Arguments.of("NONE is the empty list", "NONE", "NONE"),
                Arguments.of("issue 2: a \\ line continuation joins lines, also inside an identifier",
                        "gpu=2(gp\\\nu0 x)", "gpu=2(gpu0 x)"),
                Arguments.of("a \\ line continuation joins lines inside a value", "gpu=1(g[memory=8\\\n0G])",
                        "gpu=1(g[memory=80G])"),
                Arguments.of("Repeating an identical annotation is accepted and deduplicated (also within a block)",
                        "gpu=1(g[memory=1G,memory=1G])", "gpu=1(g[memory=1G])"),
                Arguments.of("issue 2: comma-separated, blanks around commas", "gpu=1(a) , nic=1(b)",
                        "gpu=1(a),nic=1(b)"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("accepted")
    void parse_validValue_printsCanonicalFormThatReparses(String seed, String input, String canonical)
            throws ParseException {
        ComplexValues v = ComplexValues.parse(input, TABLE);
        assertThat(v.toString()).isEqualTo(canonical);
        assertThat(ComplexValues.parse(v.toString(), TABLE)).isEqualTo(v);
    }

    /** seed sentence | input | problem fragment | column. */
    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of("The amount must equal the number of instances the list contains.", "gpu=3(a b)",
                        "does not match the 2 instances", 5),
                Arguments.of("The amount must equal the number", "gpu=1(a b)", "does not match", 5),
                Arguments.of("The amount must equal the number", "gpu=3(0-3)", "does not match the 4", 5),
                Arguments.of("An identifier may contain any character except ... =", "gpu=1(a=b)",
                        "'=' cannot appear in an identifier", 8),
                Arguments.of("except ,", "gpu=2(a,b)", "',' cannot appear in an identifier", 8),
                Arguments.of("except (", "gpu=1(a(b))", "'(' cannot appear in an identifier", 8),
                Arguments.of("except ]", "gpu=1(a])", "']' cannot appear in an identifier", 8),
                Arguments.of("followed by a characteristics block", "gpu=1(a [memory=1G])",
                        "must follow its identifier", 9),
                Arguments.of("Characteristics cannot be attached to a range which covers more than one identifier",
                        "gpu=3(0-2[memory=1G])", "cannot be attached to the range '0-2'", 7),
                Arguments.of("A bare occurrence and an annotated occurrence of the same identifier are rejected.",
                        "gpu=2(g g[memory=1G])", "both bare and with characteristics", 9),
                Arguments.of("A bare occurrence and an annotated occurrence", "gpu=2(g[memory=1G] g)",
                        "both bare and with characteristics", 20),
                Arguments.of("every occurrence must carry the same set", "gpu=2(g[memory=1G] g[memory=2G])",
                        "differ from its first occurrence", 20),
                Arguments.of("every occurrence must carry the same set", "gpu=2(g[memory=1G] g[memory=1G,model=A])",
                        "differ from its first occurrence", 20),
                Arguments.of("Each char-name must itself be a complex, defined before it is used.",
                        "gpu=1(g[colour=red])", "unknown complex 'colour'", 9),
                Arguments.of("A complex of type RSMAP cannot be used as a characteristic", "gpu=1(g[lic=1])",
                        "resource map 'lic' cannot be used as a characteristic", 9),
                Arguments.of("The referenced complex supplies the type, so memory=80G is read as MEMORY",
                        "gpu=1(g[memory=lots])", "is not a MEMORY value", 16),
                Arguments.of("bandwidth=100000 as INT", "gpu=1(g[numa_node=x])", "is not an INT", 19),
                Arguments.of("A char-value may contain any byte except ... = ( )", "gpu=1(g[model=a=b])",
                        "'=' cannot appear in a characteristic value", 16),
                Arguments.of("A char-value may contain any byte except (", "gpu=1(g[model=a(b])",
                        "'(' cannot appear in a characteristic value", 16),
                Arguments.of("a characteristic value", "gpu=1(g[model=])", "empty value for characteristic", 15),
                Arguments.of("a characteristics block", "gpu=1(g[])", "empty characteristics block", 8),
                Arguments.of("a characteristics block", "gpu=1(g[model=A,])", "empty characteristic", 17),
                Arguments.of("a characteristics block", "gpu=1(g[model=A,model=B])", "given twice", 17),
                Arguments.of("a characteristics block", "gpu=1(g[model=A)", "'[' without a matching ']'", 8),
                Arguments.of("a characteristics block", "gpu=1(g[model=A", "'[' without a matching ']'", 8),
                Arguments.of("an id list", "gpu=1(g", "'(' without a matching ')'", 6),
                Arguments.of("devices: mode is r, w or rw", "gpu=1(g[devices=/dev/x:rwx])",
                        "unknown device mode 'rwx'", 24),
                Arguments.of("issue 4: relative path refused", "gpu=1(g[devices=dev/x])", "is not absolute", 17),
                Arguments.of("issue 4: '..' refused", "gpu=1(g[devices=/dev/../etc/x])", "contains '..'", 17),
                Arguments.of("issue 4: empty path refused", "gpu=1(g[devices=/dev/x;;/dev/y])", "empty device path", 24),
                Arguments.of("complex_values names complexes", "fpga=1", "unknown complex 'fpga'", 1),
                Arguments.of("an amount", "gpu=x", "expected the amount", 5),
                Arguments.of("an amount", "gpu=-1", "expected the amount", 5),
                Arguments.of("an amount", "gpu=4x", "unexpected 'x' after the amount", 6),
                Arguments.of("ranges", "gpu=3(3-1)", "runs backwards", 7),
                Arguments.of("ranges", "gpu=3(01-03)", "leading zero", 7),
                Arguments.of("ranges are bounded", "gpu=1(0-99999999999)", "more than 65536 instances", 7),
                Arguments.of("an entry once", "gpu=1(a),gpu=1(b)", "set twice", 10),
                Arguments.of("a list", "gpu=1(a),", "expected an entry after ','", 10),
                Arguments.of("a value", "mem_free=x", "is not a MEMORY value", 10),
                Arguments.of("a value", "", "empty complex_values", 1),
                Arguments.of("issue 2: a comma-separated list", "gpu=1(a) nic=1(b)", "expected ',' between entries", 10),
                Arguments.of("issue 2: <name>=<amount>(<id-spec> ...)", "gpu=2 (a b)", "must follow the amount directly", 7),
                Arguments.of("An identifier may contain any character except whitespace (no-break space too)",
                        "gpu=1(a\u00a0b)", "does not match the 2 instances", 5),
                Arguments.of("a characteristic once", "gpu=1(g[memory=1G,memory=2G])", "given twice with different", 19),
                Arguments.of("values are bounded", "gpu=1(g[aff=" + "x".repeat(5000) + "])", "longer than 4096", 13));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("refused")
    void parse_invalidValue_isRefusedWithColumn(String seed, String input, String problem, int column) {
        assertRefused(() -> ComplexValues.parse(input, TABLE), column, problem);
    }

    @Test
    void parse_shortFormAboveMaxRsmapIds_isRefused() throws ParseException {
        // "How many ids may be created this way is limited by MAX_RSMAP_IDS ... (default 512) ... A larger
        // amount is rejected and has to be written as an explicit id list."
        assertThat(ComplexValues.parse("gpu=512", TABLE).resourceMaps().get(0).amount()).isEqualTo(512);
        assertRefused(() -> ComplexValues.parse("gpu=513", TABLE), 5, "more than MAX_RSMAP_IDS=512");
        assertRefused(() -> ComplexValues.parse("gpu=5", TABLE, Limits.DEFAULT.withMaxRsmapIds(4)), 5,
                "more than MAX_RSMAP_IDS=4");
        String explicit = "gpu=600(0-599)";
        assertThat(ComplexValues.parse(explicit, TABLE).toString()).isEqualTo(explicit);
    }

    @Test
    void parse_shortFormWithMaxRsmapIdsZero_isRefusedAltogether() {
        // "Setting MAX_RSMAP_IDS to 0 rejects the short form altogether."
        Limits none = Limits.DEFAULT.withMaxRsmapIds(0);
        assertRefused(() -> ComplexValues.parse("gpu=1", TABLE, none), 5, "disabled (MAX_RSMAP_IDS is 0)");
        assertRefused(() -> ComplexValues.parse("gpu=0", TABLE, none), 5, "disabled (MAX_RSMAP_IDS is 0)");
    }

    @Test
    void parse_shortForm_createsBareInstances() throws ParseException {
        // "Instances created this way carry no characteristics."
        ResourceMap m = ComplexValues.parse("gpu=3", TABLE).resourceMaps().get(0);
        assertThat(m.instances()).containsExactly(Instance.bare("0"), Instance.bare("1"), Instance.bare("2"));
    }

    @Test
    void parse_range_expandsToIndividualIds() throws ParseException {
        ResourceMap m = ComplexValues.parse("gpu=4(x 1-3)", TABLE).resourceMaps().get(0);
        assertThat(m.instances().stream().map(Instance::id).collect(Collectors.toList()))
                .containsExactly("x", "1", "2", "3");
    }

    @Test
    void parse_repeatedIdentifiers_areSharesOfOne() throws ParseException {
        // "The scheduler sees eight instances ... but only two identifiers are ever handed out."
        ResourceMap m = ComplexValues.parse("gpu=8(0 0 0 0 1 1 1 1)", TABLE).resourceMaps().get(0);
        assertThat(m.amount()).isEqualTo(8);
        assertThat(m.instances().stream().map(Instance::id).distinct()).containsExactly("0", "1");
    }

    @Test
    void parse_characteristic_isTypedByItsComplex() throws ParseException {
        Instance g = ComplexValues.parse("gpu=1(g[memory=80G,numa_node=1])", TABLE).resourceMaps().get(0)
                .instances().get(0);
        assertThat(g.characteristics().get("memory").orElseThrow().number()).isEqualTo(80.0 * (1L << 30));
        assertThat(g.characteristics().get("numa_node").orElseThrow().number()).isEqualTo(1.0);
    }

    @Test
    void parse_repeatedIdentifierWithEquivalentButDifferentlyWrittenValues_isRefused() {
        // "every occurrence must carry the same set ... Repeating an identical annotation is accepted":
        // occurrences are compared as written, so 1G and 1024M are not the same annotation.
        assertRefused(() -> ComplexValues.parse("gpu=2(g[memory=1G] g[memory=1024M])", TABLE), 20,
                "differ from its first occurrence");
    }

    @Test
    void parse_repeatedIdentifier_sharesOneCharacteristicsValue() throws ParseException {
        List<Instance> is = ComplexValues.parse("gpu=2(g[memory=1G] g[memory=1G])", TABLE).resourceMaps().get(0)
                .instances();
        assertThat(is.get(1).characteristics()).isSameAs(is.get(0).characteristics());
    }

    @Test
    void parse_shortFormBeyondTheInstanceLimit_isRefusedBeforeBuildingIt() {
        Limits huge = Limits.DEFAULT.withMaxRsmapIds(Integer.MAX_VALUE);
        assertRefused(() -> ComplexValues.parse("gpu=999999999", TABLE, huge), 5, "more than 65536 instances");
    }

    @Test
    void parse_columns_countCharactersNotUtf16Units() {
        assertRefused(() -> ComplexValues.parse("gpu=2(\uD83D\uDE00 x[foo=1])", TABLE), 11, "unknown complex 'foo'");
    }

    @Test
    void parse_multiLineError_reportsLineAndColumn() {
        ParseException e = assertRefused(() -> ComplexValues.parse("gpu=2(a \\\n  b[colour=x])", TABLE), 5,
                "unknown complex 'colour'");
        assertThat(e.line()).isEqualTo(2);
        assertThat(e.getMessage()).startsWith("line 2, column 5: ");
    }
}
