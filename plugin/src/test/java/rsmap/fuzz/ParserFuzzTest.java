// Jazzer fuzz tests for every parser of the resource-map language: only ParseException may escape, and
// what parses prints a canonical form that parses back to an equal value (STYLE: Values and errors).
// Without JAZZER_FUZZ they run in regression mode over ParserFuzzTestInputs/<method>/ in the test resources.
package rsmap.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.complex.Value;
import rsmap.complex.ValueType;
import rsmap.map.ComplexValues;
import rsmap.map.DeviceList;
import rsmap.map.Instance;
import rsmap.node.AttributeTypes;
import rsmap.node.Filter;
import rsmap.node.Node;
import rsmap.node.NodeAttributes;
import rsmap.request.Expression;
import rsmap.request.RequestList;
import rsmap.request.ResourceRequest;

/**
 * Each test takes the raw fuzzer bytes and reads them as UTF-8, so a seed file is the text itself;
 * bytes that are not UTF-8 become lone surrogates (U+DC80..U+DCFF) rather than U+FFFD, so the parsers
 * also see unpaired surrogates. Any exception other than {@link ParseException} fails the test
 * (Jazzer reports it as a finding); so does a round-trip mismatch.
 */
class ParserFuzzTest {
    /** The complex table of examples/complexes; requests and complex_values are read against it. */
    private static final ComplexTable TABLE;
    /** The instances of examples/node01.complex_values, matched against every request that parses. */
    private static final List<Instance> INSTANCES;

    static {
        try {
            TABLE = ComplexTable.parse(resource("complexes"));
            ComplexValues node01 = ComplexValues.parse(resource("node01.complex_values"), TABLE);
            INSTANCES = node01.resourceMaps().stream().flatMap(m -> m.instances().stream()).toList();
        } catch (ParseException e) {
            throw new IllegalStateException("example resources do not parse: " + e.getMessage(), e);
        }
    }

    @FuzzTest
    void parseComplexTable_anyText_roundTripsOrThrowsParseException(byte[] data) {
        String text = text(data);
        ComplexTable table;
        try {
            table = ComplexTable.parse(text);
        } catch (ParseException e) {
            checkError(e, text);
            return;
        }
        String canonical = table.toString();
        ComplexTable again = reparse(text, canonical, () -> ComplexTable.parse(canonical));
        // ComplexTable has no equals(); its complexes are records and its canonical text is the oracle.
        assertThat(again.complexes()).as(roundTrip(text, canonical)).isEqualTo(table.complexes());
        assertThat(again.toString()).as(roundTrip(text, canonical)).isEqualTo(canonical);
    }

    @FuzzTest
    void parseComplexValues_anyText_roundTripsOrThrowsParseException(byte[] data) {
        String text = text(data);
        ComplexValues values;
        try {
            values = ComplexValues.parse(text, TABLE);
        } catch (ParseException e) {
            checkError(e, text);
            return;
        }
        String canonical = values.toString();
        ComplexValues again = reparse(text, canonical, () -> ComplexValues.parse(canonical, TABLE));
        assertThat(again).as(roundTrip(text, canonical)).isEqualTo(values);
        assertThat(again.toString()).as(roundTrip(text, canonical)).isEqualTo(canonical);
    }

    @FuzzTest
    void parseRequestList_anyText_roundTripsOrThrowsParseException(byte[] data) {
        String text = text(data);
        RequestList requests;
        try {
            requests = RequestList.parse(text, TABLE);
        } catch (ParseException e) {
            checkError(e, text);
            return;
        }
        String canonical = requests.toString();
        RequestList again = reparse(text, canonical, () -> RequestList.parse(canonical, TABLE));
        assertThat(again).as(roundTrip(text, canonical)).isEqualTo(requests);
        assertThat(again.toString()).as(roundTrip(text, canonical)).isEqualTo(canonical);
        // Matching must not throw either, and must not depend on which of the two equal lists asks.
        for (int r = 0; r < requests.resourceRequests().size(); r++) {
            ResourceRequest request = requests.resourceRequests().get(r);
            ResourceRequest reread = again.resourceRequests().get(r);
            for (Instance i : INSTANCES) {
                assertThat(reread.admits(i)).as("%s admits %s", canonical, i).isEqualTo(request.admits(i));
            }
        }
    }

    /** The text up to the first newline is the expression, the rest an instance id to match. */
    @FuzzTest
    void parseExpression_anyTextAndId_matchesOrThrowsParseException(byte[] data) {
        String text = text(data);
        int newline = text.indexOf('\n');
        String source = newline < 0 ? text : text.substring(0, newline);
        String id = newline < 0 ? "" : text.substring(newline + 1);
        Expression expression;
        try {
            expression = Expression.parse(source);
        } catch (ParseException e) {
            checkError(e, source);
            return;
        }
        boolean hit = expression.matches(id);
        Expression again = reparse(source, expression.toString(), () -> Expression.parse(expression.toString()));
        assertThat(again).as(roundTrip(source, expression.toString())).isEqualTo(expression);
        assertThat(again.matches(id)).as("%s matches '%s'", source, id).isEqualTo(hit);
    }

    /** The same text read as every type; values that are equal must hash alike (they key group maps). */
    @FuzzTest
    void parseValue_anyTextEveryType_roundTripsOrThrowsParseException(byte[] data) {
        String text = text(data);
        for (ValueType type : ValueType.values()) {
            Value value;
            try {
                value = Value.parse(type, text);
            } catch (ParseException e) {
                checkError(e, text);
                continue;
            }
            assertThat(value.type()).isEqualTo(type);
            assertThat(value.text()).isEqualTo(text);
            Value again = reparse(text, value.toString(), () -> Value.parse(type, value.toString()));
            assertThat(again).as(type + " " + roundTrip(text, value.toString())).isEqualTo(value);
            for (String variant : List.of(text.toUpperCase(Locale.ROOT), text.toLowerCase(Locale.ROOT))) {
                Value other;
                try {
                    other = Value.parse(type, variant);
                } catch (ParseException e) {
                    continue; // case changes length or validity, e.g. "ß" -> "SS": nothing to compare
                }
                if (other.equals(value)) {
                    assertThat(other.hashCode()).as("%s '%s' equals '%s' but hashes differently", type, text,
                            variant).isEqualTo(value.hashCode());
                }
            }
        }
    }

    @FuzzTest
    void parseDeviceList_anyText_roundTripsOrThrowsParseException(byte[] data) {
        String text = text(data);
        DeviceList devices;
        try {
            devices = DeviceList.parse(text);
        } catch (ParseException e) {
            checkError(e, text);
            return;
        }
        String canonical = devices.toString();
        DeviceList again = reparse(text, canonical, () -> DeviceList.parse(canonical));
        assertThat(again).as(roundTrip(text, canonical)).isEqualTo(devices);
        assertThat(again.toString()).as(roundTrip(text, canonical)).isEqualTo(canonical);
    }

    /** Hosts every node filter that parses is evaluated on: set, missing and mismatched attributes. */
    private static final List<Node> NODES;

    static {
        try {
            NODES = List.of(
                    Node.of("node01", NodeAttributes.parse(java.util.Map.of("cpu_speed", "2.4GHz", "arch", "x86_64",
                            "kernel", "6.5.3", "mem", "64G"), AttributeTypes.of(java.util.Map.of("kernel", "version")))),
                    Node.of("x", NodeAttributes.parse(java.util.Map.of("cpu_speed", "fast", "kernel", "6.5.2"),
                            AttributeTypes.NONE)),
                    Node.of("bare", NodeAttributes.NONE));
        } catch (ParseException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /** Node filters: only ParseException escapes; the canonical form reads back; evaluation never throws. */
    @FuzzTest
    void parseFilter_anyText_roundTripsOrThrowsParseException(byte[] data) {
        String text = text(data);
        Filter filter;
        try {
            filter = Filter.parse(text);
        } catch (ParseException e) {
            checkError(e, text);
            return;
        }
        String canonical = filter.toString();
        Filter again = reparse(text, canonical, () -> Filter.parse(canonical));
        assertThat(again).as(roundTrip(text, canonical)).isEqualTo(filter);
        assertThat(again.toString()).as(roundTrip(text, canonical)).isEqualTo(canonical);
        for (Node n : NODES) {
            assertThat(again.evaluate(n).passed()).as("%s on %s", canonical, n.name()).isEqualTo(filter.test(n));
        }
    }

    /** A refusal must point into the input it was given and render without throwing. */
    private static void checkError(ParseException e, String input) {
        assertThat(e.input()).as("input carried by: %s", e.getMessage()).isEqualTo(input);
        assertThat(e.offset()).isBetween(0, input.length());
        assertThat(e.problem()).isNotBlank();
        assertThat(e.getMessage()).startsWith(e.location());
        assertThat(e.caretLine()).endsWith("^");
    }

    private interface Parse<T> {
        T run() throws ParseException;
    }

    /** The canonical form must parse again; a refusal of it is a round-trip failure, not a pass. */
    private static <T> T reparse(String text, String canonical, Parse<T> parse) {
        try {
            return parse.run();
        } catch (ParseException e) {
            throw new AssertionError(roundTrip(text, canonical) + ": canonical form refused: " + e.getMessage(), e);
        }
    }

    private static String roundTrip(String text, String canonical) {
        return "round trip of " + quote(text) + " via canonical " + quote(canonical);
    }

    /** Java-escaped, so control characters and surrogates in a failure message stay visible. */
    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c >= 0x20 && c < 0x7f) {
                b.append(c);
            } else {
                b.append(String.format("\\u%04x", (int) c));
            }
        }
        return b.append('"').toString();
    }

    /**
     * UTF-8 where valid (surrogate code points included); every other byte {@code b} becomes the lone
     * surrogate U+DC00+b, as Python's surrogateescape does.
     */
    static String text(byte[] data) {
        StringBuilder b = new StringBuilder(data.length);
        int i = 0;
        while (i < data.length) {
            int lead = data[i] & 0xff;
            int more = lead < 0x80 ? 0 : lead >= 0xc2 && lead < 0xe0 ? 1 : lead >= 0xe0 && lead < 0xf0 ? 2
                    : lead >= 0xf0 && lead < 0xf5 ? 3 : -1;
            int cp = more == 0 ? lead : more == 1 ? lead & 0x1f : more == 2 ? lead & 0x0f : lead & 0x07;
            boolean ok = more >= 0 && i + more < data.length;
            for (int k = 1; ok && k <= more; k++) {
                int next = data[i + k] & 0xff;
                ok = (next & 0xc0) == 0x80;
                cp = (cp << 6) | (next & 0x3f);
            }
            if (ok && cp <= Character.MAX_CODE_POINT && (more < 2 || cp >= (more == 2 ? 0x800 : 0x10000))) {
                b.appendCodePoint(cp);
                i += more + 1;
            } else {
                b.append((char) (0xdc00 + lead));
                i++;
            }
        }
        return b.toString();
    }

    private static String resource(String name) {
        try (InputStream in = ParserFuzzTest.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing test resource rsmap/fuzz/" + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
