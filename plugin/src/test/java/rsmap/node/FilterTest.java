// Node filters: the seed's four use cases, the syntax with its refusals, the canonical form,
// missing attributes, type mismatches and the admin limit. Table-driven; rows cite the seed or the issue.
package rsmap.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.Limits;
import rsmap.ParseException;

class FilterTest {
    static final AttributeTypes TYPES = types(Map.of("kernel", "version", "cpu_speed", "number", "arch", "string",
            "ib", "boolean"));

    /** Six hosts spanning the seed's use cases. */
    static final List<Node> HOSTS = List.of(
            node("n1", "cpu_speed", "2.4GHz", "arch", "x86_64", "kernel", "6.5.3"),
            node("n2", "cpu_speed", "1.8GHz", "arch", "x86_64", "kernel", "6.10"),
            node("x", "cpu_speed", "3GHz", "arch", "aarch64", "kernel", "6.5.2"),
            node("y", "cpu_speed", "2GHz", "arch", "ppc64le", "kernel", "6.4.9"),
            node("n5", "cpu_speed", "2100MHz", "arch", "x86_64", "kernel", "6.5.2-1-generic"),
            node("n6", "arch", "x86_64"));

    static AttributeTypes types(Map<String, String> m) {
        try {
            return AttributeTypes.of(m);
        } catch (ParseException e) {
            throw new AssertionError(e.getMessage(), e);
        }
    }

    static Node node(String name, String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        try {
            return Node.of(name, NodeAttributes.parse(m, TYPES));
        } catch (ParseException e) {
            throw new AssertionError(e.getMessage(), e);
        }
    }

    static List<String> passing(Filter f) {
        return HOSTS.stream().filter(f::test).map(Node::name).collect(Collectors.toList());
    }

    /** seed sentence | filter | hosts that pass. */
    static Stream<Arguments> useCases() {
        return Stream.of(
                Arguments.of("1. User requests all allocated nodes will have CPU speed > 2 GHz",
                        "cpu_speed > 2GHz", List.of("n1", "x", "n5")),
                Arguments.of("1. (a forgotten Hz: a bare 2G against a frequency is 2 GHz)",
                        "cpu_speed > 2G", List.of("n1", "x", "n5")),
                Arguments.of("2. User requests none of the allocated nodes will be node X, node Y, node Z",
                        "!(host in [\"x\", \"y\", \"z\"])", List.of("n1", "n2", "n5", "n6")),
                Arguments.of("2. (the same with !=)",
                        "host != \"x\" && host != \"y\" && host != \"z\"", List.of("n1", "n2", "n5", "n6")),
                Arguments.of("3. User requests none of the allocated nodes will be ARM nor POWER architecture",
                        "!(arch in [\"aarch64\", \"arm64\", \"ppc64le\", \"ppc64\"])", List.of("n1", "n2", "n5", "n6")),
                Arguments.of("4. ... running Linux version 6.5 or higher, but none will be running 6.5.2",
                        "kernel >= 6.5 && kernel != 6.5.2", List.of("n1", "n2")));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("useCases")
    void filter_seedUseCase_passesExactlyTheseHosts(String seed, String text, List<String> expected)
            throws ParseException {
        Filter f = Filter.parse(text, TYPES, Limits.DEFAULT);
        assertThat(passing(f)).as(seed).isEqualTo(expected);
        assertThat(Filter.parse(f.toString())).isEqualTo(f);
    }

    /** input | canonical form (the issue: toString() is the canonical form). */
    static Stream<Arguments> canonical() {
        return Stream.of(
                Arguments.of("cpu_speed>2GHz", "cpu_speed > 2GHz"),
                Arguments.of("  a==1&&b==2||c==3 ", "a == 1 && b == 2 || c == 3"),
                Arguments.of("a==1&&(b==2||c==3)", "a == 1 && (b == 2 || c == 3)"),
                Arguments.of("(a==1&&b==2)&&c==3", "a == 1 && b == 2 && c == 3"),
                Arguments.of("((a == 1))", "a == 1"),
                Arguments.of("!a==1", "!(a == 1)"),
                Arguments.of("!!(a==1)", "!!(a == 1)"),
                Arguments.of("!(a==1||b==2)", "!(a == 1 || b == 2)"),
                Arguments.of("host in[\"x\",\"y\"]", "host in [\"x\", \"y\"]"),
                Arguments.of("s == \"a\\\"b\\\\c\"", "s == \"a\\\"b\\\\c\""),
                Arguments.of("ok == TRUE || ok == False", "ok == true || ok == false"),
                Arguments.of("mem >= 64GiB && t > -5 && v < 6.5.10", "mem >= 64GiB && t > -5 && v < 6.5.10"),
                Arguments.of("name.with-dots_1 == \"ü\"", "name.with-dots_1 == \"ü\""),
                Arguments.of("a\t==\n1", "a == 1"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("canonical")
    void parse_valid_printsItsCanonicalForm(String text, String expected) throws ParseException {
        Filter f = Filter.parse(text);
        assertThat(f.toString()).isEqualTo(expected);
        assertThat(Filter.parse(expected)).isEqualTo(f);
    }

    /** input | column | problem (the issue: a filter that does not parse is refused with its column). */
    static Stream<Arguments> refusals() {
        return Stream.of(
                Arguments.of("", 1, "empty filter"),
                Arguments.of("   ", 4, "empty filter"),
                Arguments.of("cpu_speed > ", 13, "filter ends where a value is expected"),
                Arguments.of("cpu_speed = 2", 11, "'=' is not an operator; compare with =="),
                Arguments.of("a == 1 & b == 2", 8, "'&' is not an operator; write &&"),
                Arguments.of("a == 1 | b == 2", 8, "'|' is not an operator; write ||"),
                Arguments.of("a == 1 b == 2", 8, "unexpected 'b' after a comparison (join comparisons with && or ||)"),
                Arguments.of("(a == 1", 1, "'(' without a matching ')'"),
                Arguments.of("a == 1)", 7, "')' without a matching '('"),
                Arguments.of("host in [\"x\"", 9, "'[' without a matching ']'"),
                Arguments.of("host in \"x\"", 9, "expected '[' after in, found '\"'"),
                Arguments.of("host in [\"x\" \"y\"]", 14, "expected ',' or ']' in the list, found '\"'"),
                Arguments.of("arch == x86_64", 9,
                        "expected a value (a \"string\", a number, a version, true or false), found 'x'"),
                Arguments.of("2GHz < cpu_speed", 1, "expected an attribute name, found '2'"),
                Arguments.of("true == a", 1, "expected an attribute name, found 'true'"),
                Arguments.of("a ~ 1", 3, "expected ==, !=, <, <=, >, >= or in after 'a', found '~'"),
                Arguments.of("s == \"abc", 6, "string without its closing '\"'"),
                Arguments.of("s == \"a\\nb\"", 8, "'\\' escapes only '\"' and '\\' in a string"),
                Arguments.of("s == \"a\u0000b\"", 8, "control character U+0000 in a string"),
                Arguments.of("s == \"a\ud800\"", 8, "a string holds text, not a lone surrogate"),
                Arguments.of("s < \"x\"", 5, "'<' orders numbers and versions, not strings"),
                Arguments.of("flag >= true", 9, "'>=' orders numbers and versions, not booleans"),
                Arguments.of("host > \"x\"", 6, "'>' orders numbers and versions, and 'host' is the host name"),
                Arguments.of("host == 1", 9, "'host' is the host name, a string, and 1 is a number or version"),
                Arguments.of("cpu_speed > 2GHzz", 15,
                        "unexpected 'Hzz' after a number (units: k, K, M, G, T, Ki..Ti; Hz or B)"),
                Arguments.of("cpu_speed > 2GiHz", 14, "a frequency has decimal scales only ('GiHz')"),
                Arguments.of("v > 6..5", 16 - 13, null),
                Arguments.of("v > 6.5.x", 9, "'6.5.x' is not a version (numbers separated by '.', e.g. 6.5.2)"),
                Arguments.of("v > 1" + "0".repeat(400), 5, "number longer than 64 characters"),
                Arguments.of("é == 1", 1, "expected an attribute name, found 'é'"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("refusals")
    void parse_invalid_isRefusedWithItsColumn(String text, int column, String problem) {
        assertThatThrownBy(() -> Filter.parse(text, TYPES, Limits.DEFAULT)).isInstanceOfSatisfying(ParseException.class,
                e -> {
                    if (problem != null) {
                        assertThat(e.problem()).isEqualTo(problem);
                        assertThat(e.column()).as(e.getMessage()).isEqualTo(column);
                    }
                    assertThat(e.caretLine()).endsWith("^");
                });
    }

    /** filter | declared types refusal (the issue: a typed error at check time when types are declared). */
    static Stream<Arguments> typeChecks() {
        return Stream.of(
                Arguments.of("kernel == \"6.5\"", 11, "'kernel' is declared version, and \"6.5\" is a string"),
                Arguments.of("kernel == 2GHz", 11, "'kernel' is declared version, and 2GHz is a number"),
                Arguments.of("cpu_speed > 6.5.2", 13, "'cpu_speed' is declared number, and 6.5.2 is a version"),
                Arguments.of("arch == 1", 9, "'arch' is declared string, and 1 is a number or version"),
                Arguments.of("arch in [\"x\", 2]", 15, "'arch' is declared string, and 2 is a number or version"),
                Arguments.of("arch > 1", 6, "'>' orders numbers and versions, and 'arch' is declared string"),
                Arguments.of("ib == \"yes\"", 7, "'ib' is declared boolean, and \"yes\" is a string"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("typeChecks")
    void check_literalOfAnotherType_isRefusedWhenTypesAreDeclared(String text, int column, String problem)
            throws ParseException {
        Filter untyped = Filter.parse(text); // without declarations the filter parses, and is false at eval
        assertThatThrownBy(() -> untyped.check(TYPES, Limits.DEFAULT)).isInstanceOfSatisfying(ParseException.class,
                e -> {
                    assertThat(e.problem()).isEqualTo(problem);
                    assertThat(e.column()).isEqualTo(column);
                });
    }

    /**
     * host | filter | passes | why it fails. The rule (docs/filters.md): a comparison that cannot be made
     * (attribute not set, another type, another unit) is false, except != which is the negation of ==.
     */
    static Stream<Arguments> missingAndMismatched() {
        Node bare = Node.of("bare", NodeAttributes.NONE);
        Node text = inferred("t", "kernel", "6.5.3", "mem", "64G", "speed", "2.4GHz", "ok", "true");
        return Stream.of(
                Arguments.of(bare, "cpu_speed > 2GHz", false, "cpu_speed is not set, which does not satisfy cpu_speed > 2GHz"),
                Arguments.of(bare, "cpu_speed <= 2GHz", false, "cpu_speed is not set, which does not satisfy cpu_speed <= 2GHz"),
                Arguments.of(bare, "arch == \"x86_64\"", false, "arch is not set, which does not satisfy arch == \"x86_64\""),
                Arguments.of(bare, "arch != \"ppc64le\"", true, null),
                Arguments.of(bare, "arch in [\"ppc64le\"]", false, "arch is not set, which does not satisfy arch in [\"ppc64le\"]"),
                Arguments.of(bare, "!(arch in [\"ppc64le\"])", true, null),
                Arguments.of(bare, "!(arch != \"ppc64le\")", false,
                        "arch is not set, which satisfies arch != \"ppc64le\", which the filter negates"),
                // undeclared: "6.5.3" does not read as a number, so it is a string (the inference rule)
                Arguments.of(text, "kernel >= 6.5", false,
                        "kernel=6.5.3 (a string, not comparable with 6.5) does not satisfy kernel >= 6.5"),
                Arguments.of(text, "kernel != 6.5", true, null),
                Arguments.of(text, "mem >= 64GB", true, null),
                Arguments.of(text, "mem > 64000000000", true, null),
                Arguments.of(text, "speed > 2GB", false,
                        "speed=2.4GHz (a frequency, not comparable with 2GB) does not satisfy speed > 2GB"),
                Arguments.of(text, "ok == true", false,
                        "ok=true (a string, not comparable with true) does not satisfy ok == true"),
                Arguments.of(text, "ok == \"true\"", true, null));
    }

    static Node inferred(String name, String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        try {
            return Node.of(name, NodeAttributes.parse(m, AttributeTypes.NONE));
        } catch (ParseException e) {
            throw new AssertionError(e);
        }
    }

    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("missingAndMismatched")
    void evaluate_missingOrMismatchedAttribute_followsTheDocumentedRule(Node node, String text, boolean passes,
            String why) throws ParseException {
        Verdict v = Filter.parse(text).evaluate(node);
        assertThat(v.passed()).isEqualTo(passes);
        if (!passes) {
            assertThat(v.failure().get().why()).isEqualTo(why);
        }
    }

    /** host | filter | failing attribute | why: the first comparison that failed is named. */
    static Stream<Arguments> failures() {
        return Stream.of(
                Arguments.of("n2", "cpu_speed > 2GHz", "cpu_speed", "cpu_speed=1.8GHz does not satisfy cpu_speed > 2GHz"),
                Arguments.of("y", "cpu_speed > 2GHz", "cpu_speed", "cpu_speed=2GHz does not satisfy cpu_speed > 2GHz"),
                Arguments.of("x", "!(host in [\"x\", \"y\", \"z\"])", "host",
                        "host=x satisfies host in [\"x\", \"y\", \"z\"], which the filter negates"),
                Arguments.of("y", "arch == \"x86_64\" && kernel >= 6.5", "arch",
                        "arch=ppc64le does not satisfy arch == \"x86_64\""),
                Arguments.of("n5", "kernel >= 6.5 && kernel != 6.5.2", "kernel",
                        "kernel=6.5.2-1-generic does not satisfy kernel != 6.5.2"),
                Arguments.of("n6", "kernel >= 7 || cpu_speed > 1GHz", "kernel",
                        "kernel is not set, which does not satisfy kernel >= 7"));
    }

    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("failures")
    void evaluate_failingHost_namesTheFirstFailingComparison(String host, String text, String attribute, String why)
            throws ParseException {
        Node node = HOSTS.stream().filter(n -> n.name().equals(host)).findFirst().orElseThrow();
        Verdict v = Filter.parse(text, TYPES, Limits.DEFAULT).evaluate(node);
        assertThat(v.host()).isEqualTo(host);
        assertThat(v.failure()).isPresent();
        assertThat(v.failure().get().attribute()).isEqualTo(attribute);
        assertThat(v.failure().get().why()).isEqualTo(why);
        assertThat(v.failure().get().source()).isEqualTo(Filters.JOB);
    }

    @Test
    void combine_adminLimitFails_theFailureSaysItWasTheAdminLimit() throws ParseException {
        // seed: "The filter concept can also be extended to be used as queue/server limits"
        Filters both = Filters.combine(Filter.parse("arch != \"ppc64le\""), Filter.parse("cpu_speed > 2GHz"));
        Map<String, String> outcome = new LinkedHashMap<>();
        for (Verdict v : both.evaluate(HOSTS)) {
            outcome.put(v.host(), v.failure().map(Verdict.Failure::toString).orElse("pass"));
        }
        assertThat(outcome).containsExactly(
                Map.entry("n1", "pass"),
                Map.entry("n2", "job filter: cpu_speed=1.8GHz does not satisfy cpu_speed > 2GHz"),
                Map.entry("x", "pass"),
                Map.entry("y", "admin limit: arch=ppc64le does not satisfy arch != \"ppc64le\""),
                Map.entry("n5", "pass"),
                Map.entry("n6", "job filter: cpu_speed is not set, which does not satisfy cpu_speed > 2GHz"));
        assertThat(HOSTS.stream().filter(both::test).map(Node::name)).containsExactly("n1", "x", "n5");
    }

    @Test
    void host_comparesByHostNameRules() throws ParseException {
        Filter f = Filter.parse("host == \"NODE01\"");
        assertThat(f.test(Node.of("node01.example.org", NodeAttributes.NONE))).isTrue();
        assertThat(f.test(Node.of("node011", NodeAttributes.NONE))).isFalse();
    }

    @Test
    void limits_termsAndDepthAndLength_areRefused() {
        Limits small = Limits.DEFAULT.withFilterBounds(100, 3);
        assertThatThrownBy(() -> Filter.parse("a == 1 && b == 2", small)).hasMessageContaining("more than 3");
        assertThatThrownBy(() -> Filter.parse("a in [1, 2, 3]", small)).hasMessage(
                "column 13: filter with more than 3 comparisons and values");
        assertThatThrownBy(() -> Filter.parse("a == " + "1".repeat(100), small)).hasMessage(
                "column 101: filter longer than 100 characters");
        assertThatThrownBy(() -> Filter.parse("(".repeat(65) + "a == 1" + ")".repeat(65))).hasMessage(
                "column 65: filter nested deeper than 64 levels");
        assertThatThrownBy(() -> Filter.parse("!".repeat(100_000) + "a == 1")).isInstanceOf(ParseException.class);
    }
}
