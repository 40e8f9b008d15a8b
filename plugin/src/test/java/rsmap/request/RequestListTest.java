// Requests: the rules of Grid Engine's RSMAP manual "REQUESTING A RESOURCE MAP" as a table of canonical forms and refusals.
package rsmap.request;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.Fixtures.TABLE;
import static rsmap.Fixtures.assertRefused;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.ParseException;

class RequestListTest {

    /** seed sentence | request | canonical form. */
    static Stream<Arguments> accepted() {
        return Stream.of(
                Arguments.of("qsub -l gpu=2 ...", "gpu=2", "gpu=2"),
                Arguments.of("qsub -l 'gpu=4[same=id]' ...", "gpu=4[same=id]", "gpu=4[same=id]"),
                Arguments.of("issue 2: gpu=4[same=id,scope=job],lic=1", "gpu=4[same=id,scope=job],lic=1",
                        "gpu=4[same=id,scope=job],lic=1"),
                Arguments.of("qsub -l 'gpu=1[id=gpu0]'", "gpu=1[id=gpu0]", "gpu=1[id=gpu0]"),
                Arguments.of("qsub -l 'gpu=2[id=(gpu1*|gpu2*)&!*b]'", "gpu=2[id=(gpu1*|gpu2*)&!*b]",
                        "gpu=2[id=(gpu1*|gpu2*)&!*b]"),
                Arguments.of("grouped with brackets: a class inside the parameter list", "gpu=1[id=gpu[01]]",
                        "gpu=1[id=gpu[01]]"),
                Arguments.of("qsub -l 'gpu=2[same=numa_node]'", "gpu=2[same=numa_node]", "gpu=2[same=numa_node]"),
                Arguments.of("same= ... the name of a characteristic (by shortcut)", "gpu=2[same=numa]",
                        "gpu=2[same=numa_node]"),
                Arguments.of("a name which is configured but carried by nothing leaves the job waiting rather than"
                        + " being refused", "gpu=2[same=vendor]", "gpu=2[same=vendor]"),
                Arguments.of("qsub -pe mpi 2 -l 'gpu=1[same=id,scope=host]'", "gpu=1[same=id,scope=host]",
                        "gpu=1[same=id,scope=host]"),
                Arguments.of("qsub -l 'gpu=1[memory=40G]'", "gpu=1[memory=40G]", "gpu=1[memory=40G]"),
                Arguments.of("[gpu_temp=40] mean no hotter than 40", "gpu=1[gpu_temp=40]", "gpu=1[gpu_temp=40]"),
                Arguments.of("The parameters ... combine; canonical order id, same, scope, characteristics by name",
                        "gpu=1[model=a100,scope=job,memory=40G,same=id,id=g*]",
                        "gpu=1[id=g*,same=id,scope=job,memory=40G,model=a100]"),
                Arguments.of("RESTRING is matched as an expression", "gpu=1[family=(ampere|hopper)&!*x]",
                        "gpu=1[family=(ampere|hopper)&!*x]"),
                Arguments.of("characteristic by shortcut", "gpu=1[gmem=1G]", "gpu=1[memory=1G]"),
                Arguments.of("map by shortcut", "nic=1,mf=4G", "nic=1,mem_free=4G"),
                Arguments.of("FORCED complexes are requestable", "gpu=1[forced=x]", "gpu=1[forced=x]"),
                Arguments.of("ordinary requests", "arch=lx*,mem_free=4G,gpu=1", "arch=lx*,mem_free=4G,gpu=1"),
                Arguments.of("an ordinary resource request, where a STRING value which contains wildcards is matched as"
                        + " a pattern (HOST too)", "hostname=node0[1-3]|node1*", "hostname=node0[1-3]|node1*"),
                Arguments.of("a \\ line continuation joins lines, as in a host value", "gpu=1[same=id,\\\nscope=job]",
                        "gpu=1[same=id,scope=job]"),
                Arguments.of("blanks around separators", " gpu=1 [ same = id , scope = job ] , lic=1 ",
                        "gpu=1[same=id,scope=job],lic=1"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("accepted")
    void parse_validRequest_printsCanonicalFormThatReparses(String seed, String input, String canonical)
            throws ParseException {
        RequestList r = RequestList.parse(input, TABLE);
        assertThat(r.toString()).isEqualTo(canonical);
        assertThat(RequestList.parse(r.toString(), TABLE)).isEqualTo(r);
    }

    /** seed sentence | request | problem fragment | column. */
    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of("issue 2: error: column 7: scope= needs same=", "gpu=4[scope=job]", "scope= needs same=", 7),
                Arguments.of("scope= only widens a same= constraint, so a request which carries no same= is refused",
                        "gpu=1[id=a,scope=host]", "scope= needs same=", 12),
                Arguments.of("scope= ... takes host or job", "gpu=1[same=id,scope=cluster]", "takes host or job", 21),
                Arguments.of("The name after same= must be id or a configured complex, and anything else is refused",
                        "gpu=1[same=colour]", "same= takes id or a configured complex", 12),
                Arguments.of("The parameter name distinct is reserved ... a request using it is refused",
                        "gpu=2[distinct=id]", "distinct= is reserved", 7),
                Arguments.of("issue 2: bind is refused until it has a meaning", "gpu=2[bind=x]", "bind= is reserved", 7),
                Arguments.of("An expression which does not parse is refused when the job is submitted",
                        "gpu=1[id=(gpu1*]", "'(' without a matching ')'", 10),
                Arguments.of("An expression which does not parse", "gpu=1[id=a||b]", "expected a pattern", 12),
                Arguments.of("The complex must be defined", "gpu=1[colour=red]", "unknown parameter 'colour'", 7),
                Arguments.of("must be requestable", "gpu=1[hidden=x]", "is not requestable", 7),
                Arguments.of("must be neither a consumable", "gpu=1[h_vmem=1G]", "is a consumable", 7),
                Arguments.of("nor a resource map", "gpu=1[lic=1]", "is a resource map", 7),
                Arguments.of("the value must parse with that complex's type", "gpu=1[memory=lots]",
                        "is not a MEMORY value", 14),
                Arguments.of("the value must parse with that complex's type", "gpu=1[numa_node=one]",
                        "is not an INT", 17),
                Arguments.of("RESTRING value is an expression that must parse", "gpu=1[family=(a]",
                        "'(' without a matching ')'", 14),
                Arguments.of("parameters combine once each", "gpu=1[same=id,same=id]", "given twice", 15),
                Arguments.of("parameters combine once each", "gpu=1[memory=1G,gmem=2G]", "given twice", 17),
                Arguments.of("a parameter list", "gpu=1[]", "empty parameter list", 6),
                Arguments.of("a parameter list", "gpu=1[same]", "expected '=' after parameter 'same'", 11),
                Arguments.of("a parameter list", "gpu=1[same=]", "expected a value for parameter 'same'", 12),
                Arguments.of("a parameter list", "gpu=1[same=id", "'[' without a matching ']'", 6),
                Arguments.of("a parameter list", "gpu=1[same=id]x", "unexpected 'x'", 15),
                Arguments.of("brackets are for resource maps", "mem_free=4G[same=id]", "for resource maps only", 10),
                Arguments.of("requests name complexes", "fpga=1", "unknown complex 'fpga'", 1),
                Arguments.of("requests name requestable complexes", "hidden=x", "is not requestable", 1),
                Arguments.of("an amount", "gpu=x", "expected the amount", 5),
                Arguments.of("an amount", "gpu=0", "at least 1", 5),
                Arguments.of("an amount", "gpu=1x", "unexpected 'x' after the amount", 6),
                Arguments.of("a request once", "gpu=1,gpu=2", "requested twice", 7),
                Arguments.of("a list", "gpu=1,", "expected a request after ','", 7),
                Arguments.of("a list", "", "empty request", 1),
                Arguments.of("a value", "mem_free=lots", "is not a MEMORY value", 10),
                Arguments.of("a value", "gpu", "expected '=' after 'gpu'", 4),
                Arguments.of("values hold no whitespace", "gpu=1[model=A 100]", "whitespace inside the value", 14),
                Arguments.of("same= names what instances have in common: a resource map is no characteristic",
                        "gpu=2[same=lic]", "cannot name resource map 'lic'", 12),
                Arguments.of("inside brackets HOST is matched by host name rules: no pattern", "gpu=1[peer=node*]",
                        "is not a host name", 16),
                Arguments.of("values are bounded", "gpu=1[model=" + "x".repeat(5000) + "]", "longer than 4096", 13),
                Arguments.of("A char-value may contain any byte except ... ( and ): a request for one never matches",
                        "gpu=1[model=a(b]", "'(' cannot appear in a characteristic value", 14));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("refused")
    void parse_invalidRequest_isRefusedWithColumn(String seed, String input, String problem, int column) {
        assertRefused(() -> RequestList.parse(input, TABLE), column, problem);
    }

    @Test
    void parse_errorAfterAContinuation_pointsAtTheLineAsWritten() {
        ParseException e = assertRefused(() -> RequestList.parse("gpu=1[same=id,\\\n  scope=jo]", TABLE), 9,
                "scope= takes host or job");
        assertThat(e.line()).isEqualTo(2);
    }

    @Test
    void effectiveScope_leftOut_isHost() throws ParseException {
        // "It takes host or job, and host is what a request that leaves it out gets."
        ResourceRequest r = RequestList.parse("gpu=1[same=id]", TABLE).resourceRequests().get(0);
        assertThat(r.scope()).isEmpty();
        assertThat(r.effectiveScope()).isEqualTo(Scope.HOST);
    }

    @Test
    void scopeConflict_sameMapInMasterAndSlaveScope_needsTheSameScope() throws ParseException {
        // "A job which names one map in the master scope and in the slave scope has to give the same scope=
        // in both"
        RequestList master = RequestList.parse("gpu=1[same=id,scope=job]", TABLE);
        assertThat(RequestList.scopeConflict(master, RequestList.parse("gpu=1[same=id]", TABLE)))
                .hasValueSatisfying(p -> assertThat(p).contains("scope=job in the master scope"));
        assertThat(RequestList.scopeConflict(master, RequestList.parse("gpu=2[same=id,scope=job]", TABLE))).isEmpty();
        assertThat(RequestList.scopeConflict(master, RequestList.parse("nic=1", TABLE))).isEmpty();
    }
}
