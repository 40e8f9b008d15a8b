// Values read with the type of their complex, and how two of them compare.
package rsmap.complex;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.Fixtures.assertRefused;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.ParseException;

class ValueTest {

    /** type | text | expected number. */
    static Stream<Arguments> numbers() {
        double k = 1024;
        return Stream.of(
                // "memory=80G as MEMORY, with the Grid Engine suffix rules: k/m/g/t powers of 1000,
                // K/M/G/T powers of 1024"
                Arguments.of(ValueType.MEMORY, "80G", 80 * k * k * k),
                Arguments.of(ValueType.MEMORY, "80g", 80e9),
                Arguments.of(ValueType.MEMORY, "1k", 1000.0),
                Arguments.of(ValueType.MEMORY, "1K", 1024.0),
                Arguments.of(ValueType.MEMORY, "2m", 2e6),
                Arguments.of(ValueType.MEMORY, "2M", 2 * k * k),
                Arguments.of(ValueType.MEMORY, "3t", 3e12),
                Arguments.of(ValueType.MEMORY, "3T", 3 * k * k * k * k),
                Arguments.of(ValueType.MEMORY, "1.5G", 1.5 * k * k * k),
                Arguments.of(ValueType.MEMORY, "4096", 4096.0),
                Arguments.of(ValueType.MEMORY, "INFINITY", Double.POSITIVE_INFINITY),
                // "bandwidth=100000 as INT"
                Arguments.of(ValueType.INT, "100000", 100000.0),
                Arguments.of(ValueType.INT, "-3", -3.0),
                Arguments.of(ValueType.DOUBLE, "2.5", 2.5),
                Arguments.of(ValueType.DOUBLE, "1e3", 1000.0),
                Arguments.of(ValueType.TIME, "90", 90.0),
                Arguments.of(ValueType.TIME, "1:30", 90.0),
                Arguments.of(ValueType.TIME, "1:00:05", 3605.0),
                Arguments.of(ValueType.BOOL, "TRUE", 1.0),
                Arguments.of(ValueType.BOOL, "false", 0.0),
                Arguments.of(ValueType.BOOL, "1", 1.0));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("numbers")
    void parse_numbers_readTheTypedValue(ValueType type, String text, double expected) throws ParseException {
        assertThat(Value.parse(type, text).number()).isEqualTo(expected);
    }

    static Stream<Arguments> refusals() {
        return Stream.of(
                Arguments.of(ValueType.MEMORY, "80X", "is not a MEMORY value"),
                Arguments.of(ValueType.MEMORY, "G", "is not a MEMORY value"),
                Arguments.of(ValueType.MEMORY, "-1G", "is not a MEMORY value"),
                Arguments.of(ValueType.INT, "1.5", "is not an INT"),
                Arguments.of(ValueType.INT, "12345678901234567890", "out of range"),
                Arguments.of(ValueType.DOUBLE, "1e999", "out of range"),
                Arguments.of(ValueType.DOUBLE, "NaN", "is not a DOUBLE"),
                Arguments.of(ValueType.TIME, "1:2:3:4", "is not a TIME"),
                Arguments.of(ValueType.TIME, "1::3", "is not a TIME"),
                Arguments.of(ValueType.BOOL, "yes", "is not a BOOL"),
                Arguments.of(ValueType.HOST, "node 1", "is not a host name"),
                Arguments.of(ValueType.STRING, "", "empty"),
                Arguments.of(ValueType.RSMAP, "4", "resource map"));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("refusals")
    void parse_badText_isRefused(ValueType type, String text, String fragment) {
        assertRefused(() -> Value.parse(type, text), 0, fragment);
    }

    @Test
    void equals_memory_comparesByValue() throws ParseException {
        assertThat(Value.parse(ValueType.MEMORY, "80G")).isEqualTo(Value.parse(ValueType.MEMORY, "81920M"));
        assertThat(Value.parse(ValueType.MEMORY, "80G")).hasSameHashCodeAs(Value.parse(ValueType.MEMORY, "81920M"));
    }

    @Test
    void equals_cstring_ignoresCase_stringDoesNot() throws ParseException {
        // Grid Engine's RSMAP manual: "CSTRING without regard to case, STRING exactly"
        assertThat(Value.parse(ValueType.CSTRING, "A100")).isEqualTo(Value.parse(ValueType.CSTRING, "a100"));
        assertThat(Value.parse(ValueType.STRING, "A100")).isNotEqualTo(Value.parse(ValueType.STRING, "a100"));
    }

    @Test
    void hostsEqual_followsHostNameRules() {
        // Grid Engine's RSMAP manual: "HOST by the host name rules"
        assertThat(Value.hostsEqual("Node01", "node01")).isTrue();
        assertThat(Value.hostsEqual("node01", "node01.example.org")).isTrue();
        assertThat(Value.hostsEqual("node01.a.org", "node01.b.org")).isFalse();
        assertThat(Value.hostsEqual("node01", "node02")).isFalse();
    }
}
