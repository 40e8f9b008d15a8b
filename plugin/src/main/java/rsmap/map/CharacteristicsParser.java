// Reads the inside of a characteristics block, name=value pairs checked against the complex table.
package rsmap.map;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiFunction;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.Complex;
import rsmap.complex.ComplexTable;
import rsmap.complex.Value;

/**
 * The blocks of one complex_values text (Grid Engine's RSMAP manual, "CHARACTERISTICS"). Equal values and blocks are
 * stored once: a host lists the same characteristics on many instances, and the daemon keeps every
 * host's configuration in memory. Errors are made by the caller's {@code error}, which places an
 * offset of the joined text where it was written.
 */
final class CharacteristicsParser {
    private final ComplexTable table;
    private final Limits limits;
    private final BiFunction<String, Integer, ParseException> error;
    private final Map<String, Map<String, Value>> valuePool = new HashMap<>();
    private final Map<String, Characteristics> blockByText = new HashMap<>();
    private final Map<List<String>, String[]> namesPool = new HashMap<>();

    CharacteristicsParser(ComplexTable table, Limits limits, BiFunction<String, Integer, ParseException> error) {
        this.table = table;
        this.limits = limits;
        this.error = error;
    }

    /**
     * The block whose text, blanks removed, is {@code clean}; {@code where[i]} is the offset in the
     * joined input of {@code clean}'s character i ({@code where[clean.length()]}: the closing bracket).
     */
    Characteristics parse(String clean, int[] where) throws ParseException {
        Characteristics seenBlock = blockByText.get(clean);
        if (seenBlock != null) {
            return seenBlock; // the same block as written before: read and checked already
        }
        Map<String, Value> values = new TreeMap<>();
        int from = 0;
        while (from <= clean.length()) {
            int comma = clean.indexOf(',', from);
            int to = comma < 0 ? clean.length() : comma;
            characteristic(clean, from, to, where, values);
            from = to + 1;
        }
        Characteristics parsed = Characteristics.of(values);
        Characteristics block = parsed.withNames(namesPool.computeIfAbsent(List.of(parsed.names()), k -> parsed.names()));
        blockByText.put(clean, block);
        return block;
    }

    private void characteristic(String clean, int from, int to, int[] where, Map<String, Value> values)
            throws ParseException {
        if (from == to) {
            throw error("empty characteristic in block", where[from]);
        }
        int eq = clean.indexOf('=', from);
        if (eq < 0 || eq >= to) {
            throw error("expected '=' in characteristic '" + clean.substring(from, to) + "'", where[from]);
        }
        String name = clean.substring(from, eq);
        if (name.isEmpty()) {
            throw error("expected a characteristic name before '='", where[from]);
        }
        for (int i = eq + 1; i < to; i++) {
            char c = clean.charAt(i);
            if (c == '=' || c == '(' || c == ')') {
                throw error("'" + c + "' cannot appear in a characteristic value", where[i]);
            }
        }
        if (eq + 1 == to) {
            throw error("empty value for characteristic '" + name + "'", where[eq + 1]);
        }
        if (to - eq - 1 > limits.maxTokenChars()) {
            throw error("characteristic value longer than " + limits.maxTokenChars() + " characters", where[eq + 1]);
        }
        Complex complex = table.find(name).orElseThrow(() -> error("unknown complex '" + name
                + "' (a characteristic must be a defined complex)", where[from]));
        if (complex.isResourceMap()) {
            throw error("resource map '" + complex.name() + "' cannot be used as a characteristic", where[from]);
        }
        String text = clean.substring(eq + 1, to);
        Value known = values.get(complex.name());
        if (known != null) {
            if (known.text().equals(text)) {
                return; // an identical repetition is accepted and kept once
            }
            throw error("characteristic '" + complex.name() + "' is given twice with different values",
                    where[from]);
        }
        try {
            Map<String, Value> byText = valuePool.computeIfAbsent(complex.name(), k -> new HashMap<>());
            Value value = byText.get(text);
            if (value == null) {
                value = Value.parse(complex.type(), text);
                byText.put(text, value);
            }
            values.put(complex.name(), value);
            if (complex.name().equals(DeviceList.CHARACTERISTIC)) {
                DeviceList.parse(text);
            }
        } catch (ParseException e) {
            throw error(e.problem() + " (characteristic '" + complex.name() + "')", where[eq + 1 + e.offset()]);
        }
    }

    private ParseException error(String problem, int at) {
        return error.apply(problem, at);
    }
}
