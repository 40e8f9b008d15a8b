// Host attribute values: units and their scales, versions component-wise, inference, declarations.
package rsmap.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.Limits;
import rsmap.ParseException;

class AttributeValueTest {
    /** a | b | sign of compare(a, b), MIN_VALUE when incomparable. The issue: "2.4GHz > 2GHz, 1.8GHz < 2GHz". */
    static Stream<Arguments> quantities() {
        return Stream.of(
                Arguments.of("2.4GHz", "2GHz", 1),
                Arguments.of("1.8GHz", "2GHz", -1),
                Arguments.of("2000MHz", "2GHz", 0),
                Arguments.of("2ghz", "2GHz", 0),
                Arguments.of("2.4GHz", "2G", 1),         // a bare scale next to Hz is decimal
                Arguments.of("2.1GHz", "2G", 1),         // (2G as 2*1024^3 would make this -1)
                Arguments.of("64G", "65536M", 0),        // K M G T: powers of 1024, as Grid Engine's MEMORY
                Arguments.of("64G", "64GiB", 0),
                Arguments.of("64GB", "64G", 0),
                Arguments.of("1k", "1000", 0),           // k m g t: powers of 1000
                Arguments.of("1K", "1024", 0),
                Arguments.of("1kB", "1000B", 0),
                Arguments.of("64G", "64g", 1),
                Arguments.of("1THz", "999GHz", 1),
                Arguments.of("-5", "3", -1),
                Arguments.of("16", "16.0", 0),
                Arguments.of("2GHz", "2GB", Integer.MIN_VALUE),
                Arguments.of("2GB", "2GHz", Integer.MIN_VALUE));
    }

    @ParameterizedTest(name = "{0} vs {1}")
    @MethodSource("quantities")
    void quantity_compare_byValueWithTheDocumentedScales(String a, String b, int sign) throws ParseException {
        int c = Quantity.parse(a).compare(Quantity.parse(b));
        assertThat(c == Integer.MIN_VALUE ? c : Integer.signum(c)).isEqualTo(sign);
    }

    /** a | b | sign. The issue: "6.10 > 6.9, 6.5.2 < 6.5.10". */
    static Stream<Arguments> versions() {
        return Stream.of(
                Arguments.of("6.10", "6.9", 1),
                Arguments.of("6.5.2", "6.5.10", -1),
                Arguments.of("6.5", "6.5.0", 0),
                Arguments.of("6.5.3", "6.5", 1),
                Arguments.of("6.5.2-1-generic", "6.5.2", 0),
                Arguments.of("6.5.0-14-generic", "6.5", 0),
                Arguments.of("5.14.0_284.el9", "5.14", 0),
                Arguments.of("10", "9.99", 1),
                Arguments.of("007.1", "7.1", 0),
                Arguments.of("999999999999999999", "999999999999999998", 1));
    }

    @ParameterizedTest(name = "{0} vs {1}")
    @MethodSource("versions")
    void version_compare_componentWise(String a, String b, int sign) throws ParseException {
        assertThat(Integer.signum(Version.parse(a).compare(Version.parse(b)))).isEqualTo(sign);
        assertThat(Integer.signum(Version.parse(b).compare(Version.parse(a)))).isEqualTo(-sign);
    }

    /** type | text | refusal. */
    static Stream<Arguments> refusals() {
        return Stream.of(
                Arguments.of(AttributeType.NUMBER, "", "empty number"),
                Arguments.of(AttributeType.NUMBER, "2.4 GHz", "unexpected ' GHz' after a number (units: k, K, M, G, T, "
                        + "Ki..Ti; Hz or B)"),
                Arguments.of(AttributeType.NUMBER, "fast", "'fast' is not a number (digits, then an optional k, M, G, "
                        + "T and Hz or B)"),
                Arguments.of(AttributeType.NUMBER, "1.", "expected a digit after '.'"),
                Arguments.of(AttributeType.NUMBER, "9".repeat(64) + "T", "number longer than 64 characters"),
                Arguments.of(AttributeType.NUMBER, "9".repeat(60) + "e9", "unexpected 'e9' after a number (units: k, "
                        + "K, M, G, T, Ki..Ti; Hz or B)"),
                Arguments.of(AttributeType.VERSION, "", "empty version"),
                Arguments.of(AttributeType.VERSION, "6.x", "'6.x' is not a version (numbers separated by '.', e.g. 6.5.2)"),
                Arguments.of(AttributeType.VERSION, "v6", "'v6' is not a version (numbers separated by '.', e.g. 6.5.2)"),
                Arguments.of(AttributeType.VERSION, "6.5rc1", "unexpected 'r' in version '6.5rc1' (a suffix starts with "
                        + "-, +, _ or ~)"),
                Arguments.of(AttributeType.VERSION, "1" + ".1".repeat(32), "version with more than 32 components"),
                Arguments.of(AttributeType.VERSION, "1".repeat(19), "version component longer than 18 digits"),
                Arguments.of(AttributeType.BOOLEAN, "yes", "'yes' is not a boolean (true, false, 1 or 0)"));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("refusals")
    void parse_invalid_isRefused(AttributeType type, String text, String problem) {
        assertThatThrownBy(() -> AttributeValue.parse(type, text)).isInstanceOfSatisfying(ParseException.class,
                e -> assertThat(e.problem()).isEqualTo(problem));
    }

    @Test
    void infer_numberWhenItReadsAsOne_elseString() {
        // the issue: "an undeclared attribute is a number when its value parses as one (with an optional unit)"
        assertThat(AttributeValue.infer("2.4GHz")).isInstanceOf(Quantity.class);
        assertThat(AttributeValue.infer("64G")).isInstanceOf(Quantity.class);
        assertThat(AttributeValue.infer("16")).isInstanceOf(Quantity.class);
        assertThat(AttributeValue.infer("6.5.3")).isEqualTo(new AttributeValue.Text("6.5.3"));
        assertThat(AttributeValue.infer("x86_64")).isEqualTo(new AttributeValue.Text("x86_64"));
        assertThat(AttributeValue.infer("true")).isEqualTo(new AttributeValue.Text("true"));
    }

    @Test
    void nodeAttributes_declaredTypes_readEachValueWithItsType() throws ParseException {
        AttributeTypes types = AttributeTypes.parse("{\"kernel\":\"version\",\"ib\":\"BOOLEAN\"}", Limits.DEFAULT);
        assertThat(types.toString()).isEqualTo("{\"ib\":\"boolean\",\"kernel\":\"version\"}");
        Map<String, String> raw = new LinkedHashMap<>();
        raw.put("kernel", "6.5");
        raw.put("ib", "1");
        raw.put("speed", "2.4GHz");
        NodeAttributes a = NodeAttributes.parse(raw, types);
        assertThat(a.get("kernel").get()).isInstanceOf(Version.class);
        assertThat(a.get("ib").get()).isEqualTo(AttributeValue.Flag.TRUE);
        assertThat(a.get("speed").get().type()).isEqualTo(AttributeType.NUMBER);
        raw.put("kernel", "six");
        assertThatThrownBy(() -> NodeAttributes.parse(raw, types)).hasMessage(
                "column 1: attribute 'kernel' (version): 'six' is not a version (numbers separated by '.', e.g. 6.5.2)");
    }

    @Test
    void attributeTypes_declaredOnce_anotherTypeIsRefused() throws ParseException {
        AttributeTypes first = AttributeTypes.parse("{\"kernel\":\"version\"}", Limits.DEFAULT);
        assertThat(first.declare(first)).isEqualTo(first);
        AttributeTypes other = AttributeTypes.parse("{\"kernel\":\"string\"}", Limits.DEFAULT);
        assertThatThrownBy(() -> first.declare(other)).hasMessageContaining(
                "'kernel' is already declared version; a type is declared once");
    }

    /** json | refusal. */
    static Stream<Arguments> badTypes() {
        return Stream.of(
                Arguments.of("[]", "column 1: attribute types are a JSON object of name to type, e.g. {\"kernel\":\"version\"}"),
                Arguments.of("{\"a\":\"float\"}", "column 2: unknown type 'float' for 'a' (string, number, version or boolean)"),
                Arguments.of("{\"a\":1}", "column 2: the type of 'a' must be a string: string, number, version or boolean"),
                Arguments.of("{\"host\":\"string\"}", "column 2: 'host' is reserved in filters and cannot name an attribute"),
                Arguments.of("{\"a b\":\"string\"}", "column 2: 'a b' is not an attribute name (a letter or _, then letters,"
                        + " digits, _ . -)"),
                Arguments.of("{\"a\":\"string\",\"a\":\"number\"}", null),
                Arguments.of("{", null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badTypes")
    void attributeTypes_invalid_isRefused(String json, String message) {
        assertThatThrownBy(() -> AttributeTypes.parse(json, Limits.DEFAULT)).isInstanceOfSatisfying(ParseException.class,
                e -> {
                    if (message != null) {
                        assertThat(e.getMessage()).isEqualTo(message);
                    }
                    assertThat(e.getMessage()).doesNotContain("\n");
                });
    }
}
