// Matching a request against one instance: id=, characteristics with the complex's relop, same= groups.
package rsmap.request;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.Fixtures.TABLE;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.ParseException;
import rsmap.map.ComplexValues;
import rsmap.map.Instance;

class MatchingTest {

    private static Instance instance(String spec) throws ParseException {
        return ComplexValues.parse("gpu=1(" + spec + ")", TABLE).resourceMaps().get(0).instances().get(0);
    }

    private static ResourceRequest request(String text) throws ParseException {
        return RequestList.parse(text, TABLE).resourceRequests().get(0);
    }

    /** seed sentence | request | instance | admitted. */
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("A memory complex defined <= therefore makes the request above mean at least 40G",
                        "gpu=1[memory=40G]", "g[memory=80G]", true),
                Arguments.of("at least 40G", "gpu=1[memory=40G]", "g[memory=40G]", true),
                Arguments.of("at least 40G", "gpu=1[memory=40G]", "g[memory=39G]", false),
                Arguments.of("MEMORY by value", "gpu=1[memory=40960M]", "g[memory=40G]", true),
                Arguments.of("a gpu_temp complex defined >= makes [gpu_temp=40] mean no hotter than 40",
                        "gpu=1[gpu_temp=40]", "g[gpu_temp=35]", true),
                Arguments.of("no hotter than 40", "gpu=1[gpu_temp=40]", "g[gpu_temp=40]", true),
                Arguments.of("no hotter than 40", "gpu=1[gpu_temp=40]", "g[gpu_temp=41]", false),
                Arguments.of("relop == on a number", "gpu=1[numa_node=1]", "g[numa_node=1]", true),
                Arguments.of("relop == on a number", "gpu=1[numa_node=1]", "g[numa_node=0]", false),
                Arguments.of("relop != on a number", "gpu=1[cores=8]", "g[cores=16]", true),
                Arguments.of("relop != on a number", "gpu=1[cores=8]", "g[cores=8]", false),
                Arguments.of("relop < : requested < configured", "gpu=1[clock=1.5]", "g[clock=2.0]", true),
                Arguments.of("relop < : requested < configured", "gpu=1[clock=1.5]", "g[clock=1.5]", false),
                Arguments.of("relop > on TIME: requested > configured", "gpu=1[runlimit=1:00:00]", "g[runlimit=1800]",
                        true),
                Arguments.of("relop > on TIME", "gpu=1[runlimit=1:00:00]", "g[runlimit=3600]", false),
                Arguments.of("BOOL by value", "gpu=1[ecc=true]", "g[ecc=1]", true),
                Arguments.of("BOOL by value", "gpu=1[ecc=true]", "g[ecc=FALSE]", false),
                Arguments.of("CSTRING without regard to case", "gpu=1[model=a100]", "g[model=A100]", true),
                Arguments.of("CSTRING", "gpu=1[model=a100]", "g[model=H100]", false),
                Arguments.of("STRING exactly", "gpu=1[vendor=nvidia]", "g[vendor=NVIDIA]", false),
                Arguments.of("STRING exactly", "gpu=1[vendor=nvidia]", "g[vendor=nvidia]", true),
                Arguments.of("This differs from an ordinary resource request, where a STRING value which contains"
                        + " wildcards is matched as a pattern.", "gpu=1[vendor=nv*]", "g[vendor=nvidia]", false),
                Arguments.of("STRING exactly, also when it looks like a pattern", "gpu=1[vendor=nv*]", "g[vendor=nv*]",
                        true),
                Arguments.of("RESTRING is matched as an expression", "gpu=1[family=amp*|hop*]", "g[family=hopper]",
                        true),
                Arguments.of("RESTRING is matched as an expression", "gpu=1[family=amp*|hop*]", "g[family=volta]",
                        false),
                Arguments.of("RESTRING with relop != inverts the match", "gpu=1[notfam=amp*]", "g[notfam=volta]", true),
                Arguments.of("RESTRING with relop !=", "gpu=1[notfam=amp*]", "g[notfam=ampere]", false),
                Arguments.of("HOST by the host name rules", "gpu=1[peer=NODE02]", "g[peer=node02.example.org]", true),
                Arguments.of("HOST by the host name rules", "gpu=1[peer=node02]", "g[peer=node03]", false),
                Arguments.of("An instance which does not carry the characteristic never matches",
                        "gpu=1[memory=1]", "g[model=A100]", false),
                Arguments.of("never matches, even for !=", "gpu=1[cores=8]", "g", false),
                Arguments.of("never matches, even for RESTRING !=", "gpu=1[notfam=x]", "g", false),
                Arguments.of("an instance has to satisfy all of them", "gpu=1[id=g*,memory=40G]", "g1[memory=80G]",
                        true),
                Arguments.of("an instance has to satisfy all of them", "gpu=1[id=h*,memory=40G]", "g1[memory=80G]",
                        false),
                Arguments.of("an instance has to satisfy all of them", "gpu=1[id=g*,memory=90G]", "g1[memory=80G]",
                        false),
                Arguments.of("a request without parameters admits any instance", "gpu=1", "g1[memory=80G]", true));
    }

    @ParameterizedTest(name = "{1} vs {2} = {3}")
    @MethodSource("cases")
    void admits_instance_followsTheRelopOfTheComplex(String seed, String req, String inst, boolean expected)
            throws ParseException {
        assertThat(request(req).admits(instance(inst))).isEqualTo(expected);
    }

    @Test
    void groupOf_sameId_isTheIdentifier() throws ParseException {
        Same same = request("gpu=1[same=id]").same().orElseThrow();
        assertThat(same.groupOf(instance("g0"))).contains("g0");
    }

    @Test
    void groupOf_sameCharacteristic_isItsValue_andEmptyWithoutIt() throws ParseException {
        // "An instance which does not carry the named characteristic cannot take part"
        Same same = request("gpu=1[same=numa_node]").same().orElseThrow();
        assertThat(same.groupOf(instance("a[numa_node=1]"))).isEqualTo(same.groupOf(instance("b[numa_node=1]")));
        assertThat(same.groupOf(instance("a[numa_node=1]"))).isNotEqualTo(same.groupOf(instance("b[numa_node=0]")));
        assertThat(same.groupOf(instance("c"))).isEmpty();
    }
}
