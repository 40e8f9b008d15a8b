// Reads a complex_values string: entries, amounts, id lists, ranges and characteristics blocks.
package rsmap.map;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import rsmap.Chars;
import rsmap.Continuation;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.Complex;
import rsmap.complex.ComplexTable;
import rsmap.complex.Value;

/**
 * One pass over the text. A backslash before a line end joins the lines first (Grid Engine's RSMAP manual, "CHARACTERISTICS":
 * "a long definition can be continued with \"); errors still point into the text as written. Entries
 * are separated by commas, id-specs by whitespace, and whitespace inside a characteristics block is
 * ignored.
 */
final class ComplexValuesParser {
    private static final String KEYWORD = "complex_values";

    private final String original;
    private final String in;
    /** The joined lines; null for input over the length limit (refused before anything else). */
    private final Continuation lines;
    private final ComplexTable table;
    private final Limits limits;
    private int pos;
    private final CharacteristicsParser blocks;

    ComplexValuesParser(String text, ComplexTable table, Limits limits) {
        this.original = text;
        this.table = table;
        this.limits = limits;
        this.lines = text.length() <= limits.maxInputChars() ? Continuation.of(text) : null;
        this.in = lines == null ? text : lines.joined();
        this.blocks = new CharacteristicsParser(table, limits, this::error);
    }

    ComplexValues parse() throws ParseException {
        if (original.length() > limits.maxInputChars()) {
            throw error("value longer than " + limits.maxInputChars() + " characters", limits.maxInputChars());
        }
        skipBlank();
        // The line of a host configuration file may be pasted whole: "complex_values gpu=...".
        if (in.startsWith(KEYWORD, pos) && pos + KEYWORD.length() < in.length()
                && Chars.isSpace(in.charAt(pos + KEYWORD.length()))) {
            pos += KEYWORD.length();
            skipBlank();
        }
        if (pos == in.length()) {
            throw error("empty complex_values (write NONE for none)", pos);
        }
        int end = in.length();
        while (end > pos && Chars.isSpace(in.charAt(end - 1))) {
            end--;
        }
        if (Chars.keyword(in.substring(pos, end), "NONE")) {
            return new ComplexValues(List.of());
        }
        List<ComplexValues.Entry> entries = new ArrayList<>();
        Set<String> names = new HashSet<>();
        int instances = 0;
        while (true) {
            int at = pos;
            ComplexValues.Entry e = entry();
            if (!names.add(e.name())) {
                throw error("'" + e.name() + "' is set twice in this list", at);
            }
            if (e instanceof ResourceMap) {
                instances += ((ResourceMap) e).amount();
                if (instances > limits.maxInstances()) {
                    throw error("more than " + limits.maxInstances() + " instances on one host", at);
                }
            }
            entries.add(e);
            skipBlank();
            if (pos == in.length()) {
                return new ComplexValues(entries);
            }
            if (in.charAt(pos) != ',') {
                throw error("expected ',' between entries, found '" + in.charAt(pos) + "'", pos);
            }
            pos++;
            skipBlank();
            if (pos == in.length()) {
                throw error("expected an entry after ','", pos);
            }
        }
    }

    private ComplexValues.Entry entry() throws ParseException {
        int start = pos;
        while (pos < in.length() && in.charAt(pos) != '=' && in.charAt(pos) != ',' && !Chars.isSpace(in.charAt(pos))) {
            pos++;
        }
        String name = in.substring(start, pos);
        if (name.isEmpty()) {
            throw error("expected a complex name, found '" + in.charAt(pos) + "'", pos);
        }
        if (pos == in.length() || in.charAt(pos) != '=') {
            throw error("expected '=' after '" + name + "'", pos);
        }
        Complex complex = table.find(name).orElseThrow(() -> error("unknown complex '" + name + "'", start));
        pos++;
        if (complex.isResourceMap()) {
            return resourceMap(complex);
        }
        int vstart = pos;
        while (pos < in.length() && in.charAt(pos) != ',' && !Chars.isSpace(in.charAt(pos))) {
            pos++;
        }
        if (vstart == pos) {
            throw error("expected a value for '" + complex.name() + "'", vstart);
        }
        checkLength(vstart, pos, "value");
        Value value = value(complex, vstart, pos);
        if (complex.consumable().isConsumable() && value.number() < 0) {
            throw error("the capacity of consumable '" + complex.name() + "' cannot be negative", vstart);
        }
        return new Setting(complex, value);
    }

    private ResourceMap resourceMap(Complex complex) throws ParseException {
        int amountAt = pos;
        while (pos < in.length() && in.charAt(pos) >= '0' && in.charAt(pos) <= '9') {
            pos++;
        }
        if (amountAt == pos) {
            throw error("expected the amount of resource map '" + complex.name() + "' (a whole number)", amountAt);
        }
        if (pos - amountAt > 9) {
            throw error("amount " + in.substring(amountAt, pos) + " is too large", amountAt);
        }
        int amount = Integer.parseInt(in.substring(amountAt, pos));
        if (pos == in.length() || in.charAt(pos) != '(') {
            int after = pos;
            while (after < in.length() && Chars.isSpace(in.charAt(after))) {
                after++;
            }
            if (after < in.length() && in.charAt(after) == '(') {
                throw error("the id list must follow the amount directly", after);
            }
            if (pos < in.length() && in.charAt(pos) != ',' && !Chars.isSpace(in.charAt(pos))) {
                throw error("unexpected '" + in.charAt(pos) + "' after the amount of '" + complex.name()
                        + "' (expected '(' or the end of the entry)", pos);
            }
            return shortForm(complex, amount, amountAt);
        }
        int open = pos++;
        List<Instance> instances = new ArrayList<>();
        Map<String, Instance> seen = new HashMap<>();
        while (true) {
            skipBlank();
            if (pos == in.length()) {
                throw error("'(' without a matching ')'", open);
            }
            if (in.charAt(pos) == ')') {
                pos++;
                break;
            }
            idSpec(instances, seen);
        }
        if (instances.size() != amount) {
            throw error("amount " + amount + " of '" + complex.name() + "' does not match the " + instances.size()
                    + " instance" + (instances.size() == 1 ? "" : "s") + " listed", amountAt);
        }
        return new ResourceMap(complex, instances);
    }

    /** Grid Engine's RSMAP manual, "The short form": gpu=4 is gpu=4(0-3), at most MAX_RSMAP_IDS ids, none when it is 0. */
    private ResourceMap shortForm(Complex complex, int amount, int amountAt) throws ParseException {
        if (limits.maxRsmapIds() == 0) {
            throw error("the short form '" + complex.name() + "=" + amount + "' is disabled (MAX_RSMAP_IDS is 0);"
                    + " list the ids, e.g. " + complex.name() + "=2(0 1)", amountAt);
        }
        if (amount > limits.maxRsmapIds()) {
            throw error("the short form '" + complex.name() + "=" + amount + "' creates more than MAX_RSMAP_IDS="
                    + limits.maxRsmapIds() + " ids; list them explicitly", amountAt);
        }
        if (amount > limits.maxInstances()) {
            throw error("more than " + limits.maxInstances() + " instances in one resource map", amountAt);
        }
        List<Instance> instances = new ArrayList<>(amount);
        for (int i = 0; i < amount; i++) {
            instances.add(Instance.bare(Integer.toString(i)));
        }
        return new ResourceMap(complex, instances);
    }

    /** One id-spec: an identifier, a range {@code 1-3}, or an identifier with a characteristics block. */
    private void idSpec(List<Instance> instances, Map<String, Instance> seen) throws ParseException {
        int start = pos;
        while (pos < in.length() && isIdChar(in.charAt(pos))) {
            pos++;
        }
        if (pos == start) {
            char c = in.charAt(pos);
            if (c == '[') {
                throw error("a characteristics block must follow its identifier directly", pos);
            }
            throw error("'" + c + "' cannot appear in an identifier", pos);
        }
        checkLength(start, pos, "identifier");
        for (int i = start; i < pos; i++) {
            if (Character.isISOControl(in.charAt(i))) {
                throw error("control character in identifier", i);
            }
        }
        String token = in.substring(start, pos);
        Characteristics chars = Characteristics.NONE;
        if (pos < in.length() && in.charAt(pos) == '[') {
            chars = block();
        }
        if (pos < in.length() && in.charAt(pos) != ')' && !Chars.isSpace(in.charAt(pos))) {
            char c = in.charAt(pos);
            throw error(c == '[' ? "an identifier carries one characteristics block"
                    : "'" + c + "' cannot appear in an identifier", pos);
        }
        long[] range = range(token, start);
        if (range == null) {
            add(instances, seen, token, chars, start);
            return;
        }
        long count = range[1] - range[0] + 1;
        if (count > 1 && !chars.isEmpty()) {
            throw error("characteristics cannot be attached to the range '" + token
                    + "', which covers more than one identifier; list them one by one", start);
        }
        if (instances.size() + count > limits.maxInstances()) {
            throw error("range '" + token + "' makes more than " + limits.maxInstances() + " instances", start);
        }
        for (long id = range[0]; id <= range[1]; id++) {
            add(instances, seen, Long.toString(id), chars, start);
        }
    }

    private void add(List<Instance> instances, Map<String, Instance> seen, String id, Characteristics chars, int at)
            throws ParseException {
        if (instances.size() >= limits.maxInstances()) {
            throw error("more than " + limits.maxInstances() + " instances in one resource map", at);
        }
        Instance first = seen.get(id);
        if (first == null) {
            first = new Instance(id, chars);
            seen.put(id, first);
        } else {
            // Grid Engine's RSMAP manual, "Repeated identifiers": every occurrence carries the same set, order ignored;
            // a bare and an annotated occurrence are rejected; an identical annotation is kept once.
            Characteristics known = first.characteristics();
            if (known.isEmpty() != chars.isEmpty()) {
                throw error("identifier '" + id + "' occurs both bare and with characteristics", at);
            }
            if (!known.sameText(chars)) {
                throw error("identifier '" + id + "' carries characteristics that differ from its first"
                        + " occurrence " + id + known, at);
            }
        }
        instances.add(first); // shares of one identifier are one immutable Instance
    }

    /** {@code [lo, hi]} of an integer range token, or null for a plain identifier. */
    private long[] range(String token, int at) throws ParseException {
        int dash = token.indexOf('-');
        if (dash <= 0 || dash == token.length() - 1 || !digits(token, 0, dash)
                || !digits(token, dash + 1, token.length())) {
            return null;
        }
        String lo = token.substring(0, dash);
        String hi = token.substring(dash + 1);
        if ((lo.length() > 1 && lo.charAt(0) == '0') || (hi.length() > 1 && hi.charAt(0) == '0')) {
            throw error("range '" + token + "' has a leading zero; write the ids one by one", at);
        }
        if (lo.length() > 18 || hi.length() > 18) {
            throw error("range '" + token + "' is out of bounds", at);
        }
        long a = Long.parseLong(lo);
        long b = Long.parseLong(hi);
        if (b < a) {
            throw error("range '" + token + "' runs backwards", at);
        }
        if (b - a >= limits.maxInstances()) {
            throw error("range '" + token + "' makes more than " + limits.maxInstances() + " instances", at);
        }
        return new long[] {a, b};
    }

    /** {@code [name=value,...]}: whitespace inside is ignored; offsets still point into the input. */
    private Characteristics block() throws ParseException {
        int open = pos++;
        int close = in.indexOf(']', pos);
        if (close < 0) {
            throw error("'[' without a matching ']'", open);
        }
        StringBuilder clean = new StringBuilder(close - pos);
        int[] where = new int[close - pos + 1];
        for (; pos < close; pos++) {
            char c = in.charAt(pos);
            if (!Chars.isSpace(c)) {
                where[clean.length()] = pos;
                clean.append(c);
            }
        }
        where[clean.length()] = pos++;
        if (clean.length() == 0) {
            throw error("empty characteristics block", open);
        }
        return blocks.parse(clean.toString(), where);
    }

    private Value value(Complex complex, int from, int to) throws ParseException {
        try {
            return Value.parse(complex.type(), in, from, to);
        } catch (ParseException e) {
            throw error(e.problem(), e.offset());
        }
    }

    private void checkLength(int from, int to, String what) throws ParseException {
        if (to - from > limits.maxTokenChars()) {
            throw error(what + " longer than " + limits.maxTokenChars() + " characters", from);
        }
    }

    /** Grid Engine's RSMAP manual: an identifier contains anything but whitespace, ',', '=', '(', ')', '[' and ']'. */
    private static boolean isIdChar(char c) {
        return !Chars.isSpace(c) && c != ',' && c != '=' && c != '(' && c != ')' && c != '[' && c != ']';
    }

    private void skipBlank() {
        while (pos < in.length() && Chars.isSpace(in.charAt(pos))) {
            pos++;
        }
    }

    private static boolean digits(String s, int from, int to) {
        if (from >= to) {
            return false;
        }
        for (int i = from; i < to; i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /** An error at index {@code at} of the joined text, reported at its place in the text as written. */
    private ParseException error(String problem, int at) {
        return lines == null ? new ParseException(problem, original, at) : lines.error(problem, at);
    }
}
