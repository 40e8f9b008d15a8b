// A number with an optional scale and unit, as host attributes carry them: 2.4GHz, 64G, 512GiB, 16.
package rsmap.node;

import java.util.Optional;
import rsmap.ParseException;

/**
 * <pre>
 * number := ['-' | '+'] digits ['.' digits] [scale ['i']] [unit]
 * scale  := k | K | m | M | g | G | t | T
 * unit   := Hz (any case) | B
 * </pre>
 * Scales (node filters and alternatives asks to decide and document them; docs/filters.md "Units"):
 * <ul>
 * <li>with {@code Hz}: powers of 1000 whatever the case ({@code 2.4GHz} is 2.4e9 Hz);</li>
 * <li>with {@code B} or no unit: {@code K M G T} and {@code Ki Mi Gi Ti} are powers of 1024, {@code k m g t}
 * powers of 1000, as Grid Engine's MEMORY type reads them (so {@code 64G} here equals {@code 64G} in a
 * complex_values): {@code 64G} is 64·1024³;</li>
 * <li>a scaled number without a unit compared with a frequency takes the frequency's decimal meaning
 * ({@code cpu_speed > 2G} against {@code 2.4GHz} reads 2G as 2e9 Hz), so a forgotten "Hz" does not move
 * the bound by 7 %.</li>
 * </ul>
 * Frequencies and byte counts do not compare with each other; a number without a unit compares with
 * either. Two quantities are {@link #equals equal} when written alike; {@link #compare} compares values.
 */
public final class Quantity implements AttributeValue {
    /** Longest text read as a number: more digits than a double holds are a mistake, not a value. */
    static final int MAX_CHARS = 64;
    private static final String SCALES = "kKmMgGtT";

    /** What a quantity counts, from its unit. */
    public enum Unit { NONE, HERTZ, BYTES }

    private final String text;
    private final Unit unit;
    /** Base units (Hz, bytes), the scale read by the rules above. */
    private final double value;
    /** For a scaled number without unit: the value with a decimal scale (its meaning next to Hz). */
    private final double decimal;

    private Quantity(String text, Unit unit, double value, double decimal) {
        this.text = text;
        this.unit = unit;
        this.value = value;
        this.decimal = decimal;
    }

    public static Quantity parse(String text) throws ParseException {
        Object r = read(text);
        if (r instanceof Quantity) {
            return (Quantity) r;
        }
        Refusal f = (Refusal) r;
        throw new ParseException(f.problem, text, f.at);
    }

    /** The number {@code text} reads as, if it reads as one. */
    public static Optional<Quantity> tryParse(String text) {
        Object r = read(text);
        return r instanceof Quantity ? Optional.of((Quantity) r) : Optional.empty();
    }

    private record Refusal(String problem, int at) {
    }

    /** A Quantity or a Refusal; no exception on the path of inference, which tries every value. */
    private static Object read(String s) {
        int n = s.length();
        if (n == 0) {
            return new Refusal("empty number", 0);
        }
        if (n > MAX_CHARS) {
            return new Refusal("number longer than " + MAX_CHARS + " characters", 0);
        }
        int i = s.charAt(0) == '-' || s.charAt(0) == '+' ? 1 : 0;
        int digits = i;
        while (i < n && isDigit(s.charAt(i))) {
            i++;
        }
        if (i == digits) {
            return new Refusal("'" + s + "' is not a number (digits, then an optional k, M, G, T and Hz or B)", 0);
        }
        if (i < n && s.charAt(i) == '.') {
            int frac = ++i;
            while (i < n && isDigit(s.charAt(i))) {
                i++;
            }
            if (i == frac) {
                return new Refusal("expected a digit after '.'", i);
            }
        }
        double mantissa = Double.parseDouble(s.substring(0, i));
        int power = 0;
        boolean binary = false;
        int scaleAt = i;
        if (i < n && SCALES.indexOf(s.charAt(i)) >= 0) {
            power = SCALES.indexOf(s.charAt(i)) / 2 + 1;
            binary = Character.isUpperCase(s.charAt(i));
            i++;
            if (i < n && s.charAt(i) == 'i') {
                binary = true;
                i++;
            }
        }
        Unit unit = Unit.NONE;
        if (s.regionMatches(true, i, "Hz", 0, 2) && i + 2 == n) {
            if (i > scaleAt + 1) {
                return new Refusal("a frequency has decimal scales only ('" + s.substring(scaleAt, i) + "Hz')",
                        scaleAt);
            }
            unit = Unit.HERTZ;
            i += 2;
        } else if (i < n && s.charAt(i) == 'B' && i + 1 == n) {
            unit = Unit.BYTES;
            i++;
        }
        if (i < n) {
            return new Refusal("unexpected '" + s.substring(i) + "' after a number (units: k, K, M, G, T, Ki..Ti;"
                    + " Hz or B)", i);
        }
        double decimalValue = mantissa * Math.pow(1000, power);
        double value = unit != Unit.HERTZ && binary ? mantissa * Math.pow(1024, power) : decimalValue;
        if (Double.isInfinite(value)) {
            return new Refusal("number '" + s + "' is out of range", 0);
        }
        return new Quantity(s, unit, value, decimalValue);
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    public Unit unit() {
        return unit;
    }

    /** The value in Hz, bytes or plain, scales applied. */
    public double value() {
        return value;
    }

    /**
     * Compares two quantities by value: negative, zero or positive, or {@link Integer#MIN_VALUE} when
     * they count different things (a frequency and a byte count).
     */
    public int compare(Quantity other) {
        if (unit != Unit.NONE && other.unit != Unit.NONE && unit != other.unit) {
            return Integer.MIN_VALUE;
        }
        Unit context = unit != Unit.NONE ? unit : other.unit;
        return Double.compare(valueIn(context), other.valueIn(context));
    }

    private double valueIn(Unit context) {
        return unit == Unit.NONE && context == Unit.HERTZ ? decimal : value;
    }

    @Override
    public AttributeType type() {
        return AttributeType.NUMBER;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Quantity && ((Quantity) o).text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    /** As written. */
    @Override
    public String toString() {
        return text;
    }
}
