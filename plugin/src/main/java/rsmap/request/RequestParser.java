// Reads a request list: entries, amounts, and the bracket parameters of resource map requests.
package rsmap.request;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import rsmap.Chars;
import rsmap.Continuation;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.Complex;
import rsmap.complex.ComplexTable;
import rsmap.complex.Value;
import rsmap.complex.ValueType;

/**
 * One pass with offsets into the original text. Entries are separated by commas; blanks around
 * commas, brackets and '=' are allowed. Parameters (Grid Engine's RSMAP manual, "Parameters in a request"): id, same,
 * scope, distinct and bind are reserved; any other name is a characteristic.
 */
final class RequestParser {
    private final String in;
    /** The request as written, its continuation lines joined into {@code in}. */
    private final Continuation lines;
    private final ComplexTable table;
    private final Limits limits;
    private int pos;

    RequestParser(String text, ComplexTable table, Limits limits) {
        this.lines = text.length() <= limits.maxInputChars() ? Continuation.of(text) : null;
        this.in = lines == null ? text : lines.joined();
        this.table = table;
        this.limits = limits;
    }

    /** Every refusal points into the request as written, continuation lines included. */
    RequestList parse() throws ParseException {
        try {
            return list();
        } catch (ParseException e) {
            throw lines == null ? e : lines.relocate(e);
        }
    }

    private RequestList list() throws ParseException {
        if (in.length() > limits.maxInputChars()) {
            throw error("request longer than " + limits.maxInputChars() + " characters", limits.maxInputChars());
        }
        List<Request> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        skipBlank();
        if (pos == in.length()) {
            throw error("empty request", pos);
        }
        while (true) {
            int at = pos;
            Request r = entry();
            if (!names.add(r.name())) {
                throw error("'" + r.name() + "' is requested twice", at);
            }
            out.add(r);
            skipBlank();
            if (pos == in.length()) {
                return new RequestList(out);
            }
            if (in.charAt(pos) != ',') {
                throw error("unexpected '" + in.charAt(pos) + "' after the request for '" + r.name() + "'", pos);
            }
            pos++;
            skipBlank();
            if (pos == in.length()) {
                throw error("expected a request after ','", pos);
            }
        }
    }

    private Request entry() throws ParseException {
        int start = pos;
        while (pos < in.length() && "=,[]".indexOf(in.charAt(pos)) < 0 && !Chars.isSpace(in.charAt(pos))) {
            pos++;
        }
        String name = in.substring(start, pos);
        if (name.isEmpty()) {
            throw error("expected a complex name, found '" + in.charAt(pos) + "'", pos);
        }
        skipBlank();
        if (pos == in.length() || in.charAt(pos) != '=') {
            throw error("expected '=' after '" + name + "'", pos);
        }
        pos++;
        skipBlank();
        Complex complex = table.find(name).orElseThrow(() -> error("unknown complex '" + name + "'", start));
        if (!complex.requestable().isRequestable()) {
            throw error("complex '" + complex.name() + "' is not requestable", start);
        }
        if (complex.isResourceMap()) {
            return resourceRequest(complex);
        }
        int vstart = pos;
        // String values are patterns whose [...] classes belong to them; other types end at '['.
        int vend = valueEnd(complex.type().isString() ? Stop.PATTERN : Stop.PLAIN);
        if (vend < in.length() && in.charAt(vend) == '[') {
            throw error("parameters in brackets are for resource maps only, and '" + complex.name()
                    + "' is a " + complex.type(), vstart);
        }
        checkLength(vstart, vend);
        Value value;
        if (complex.type().isString()) {
            // An ordinary request for a string complex is matched as a pattern (Grid Engine's RSMAP manual contrasts it with
            // a bracket parameter): it must parse as an expression, and is kept as written.
            Expression.parse(in, vstart, vend, limits);
            value = Value.pattern(complex.type(), in.substring(vstart, vend));
        } else {
            value = Value.parse(complex.type(), in, vstart, vend);
        }
        pos = vend;
        return new PlainRequest(complex, value);
    }

    private ResourceRequest resourceRequest(Complex complex) throws ParseException {
        int amountAt = pos;
        while (pos < in.length() && in.charAt(pos) >= '0' && in.charAt(pos) <= '9') {
            pos++;
        }
        if (amountAt == pos) {
            throw error("expected the amount of '" + complex.name() + "' (a whole number)", amountAt);
        }
        if (pos - amountAt > 9) {
            throw error("amount " + in.substring(amountAt, pos) + " is too large", amountAt);
        }
        int amount = Integer.parseInt(in.substring(amountAt, pos));
        if (amount < 1) {
            throw error("the amount of '" + complex.name() + "' must be at least 1", amountAt);
        }
        skipBlank();
        if (pos == in.length() || in.charAt(pos) != '[') {
            if (pos < in.length() && in.charAt(pos) != ',') {
                throw error("unexpected '" + in.charAt(pos) + "' after the amount of '" + complex.name() + "'", pos);
            }
            return ResourceRequest.of(complex, amount);
        }
        return parameters(complex, amount);
    }

    private ResourceRequest parameters(Complex complex, int amount) throws ParseException {
        int open = pos++;
        Optional<Expression> id = Optional.empty();
        Optional<Same> same = Optional.empty();
        Optional<Scope> scope = Optional.empty();
        int scopeAt = -1;
        List<CharacteristicFilter> filters = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        skipBlank();
        if (pos < in.length() && in.charAt(pos) == ']') {
            throw error("empty parameter list", open);
        }
        while (true) {
            skipBlank();
            int nameAt = pos;
            while (pos < in.length() && "=,[]".indexOf(in.charAt(pos)) < 0 && !Chars.isSpace(in.charAt(pos))) {
                pos++;
            }
            String name = in.substring(nameAt, pos);
            if (pos == in.length()) {
                throw error("'[' without a matching ']'", open);
            }
            if (name.isEmpty()) {
                throw error("expected a parameter name, found '" + in.charAt(pos) + "'", pos);
            }
            skipBlank();
            if (pos == in.length() || in.charAt(pos) != '=') {
                throw error("expected '=' after parameter '" + name + "'", pos);
            }
            pos++;
            skipBlank();
            int vstart = pos;
            int vend = valueEnd(Stop.PARAMETER);
            if (vend == in.length()) {
                throw error("'[' without a matching ']'", open);
            }
            int trimmed = vend;
            while (trimmed > vstart && Chars.isSpace(in.charAt(trimmed - 1))) {
                trimmed--;
            }
            if (vstart == trimmed) {
                throw error("expected a value for parameter '" + name + "'", vstart);
            }
            for (int i = vstart; i < trimmed; i++) {
                if (Chars.isSpace(in.charAt(i))) {
                    throw error("whitespace inside the value of parameter '" + name + "'", i);
                }
            }
            checkLength(vstart, trimmed);
            String value = in.substring(vstart, trimmed);
            switch (name) {
                case "id":
                    checkOnce(seen, name, nameAt);
                    id = Optional.of(Expression.parse(in, vstart, trimmed, limits));
                    break;
                case "same":
                    checkOnce(seen, name, nameAt);
                    same = Optional.of(same(value, vstart));
                    break;
                case "scope":
                    checkOnce(seen, name, nameAt);
                    scopeAt = nameAt;
                    if (value.equals("host")) {
                        scope = Optional.of(Scope.HOST);
                    } else if (value.equals("job")) {
                        scope = Optional.of(Scope.JOB);
                    } else {
                        throw error("scope= takes host or job, not '" + value + "'", vstart);
                    }
                    break;
                case "distinct":
                    throw error("distinct= is reserved for a constraint which is not implemented", nameAt);
                case "bind":
                    throw error("bind= is reserved and has no meaning yet", nameAt);
                default:
                    CharacteristicFilter f = filter(name, nameAt, vstart, trimmed);
                    checkOnce(seen, f.name(), nameAt);
                    filters.add(f);
            }
            pos = vend;
            if (in.charAt(pos) == ']') {
                pos++;
                break;
            }
            pos++; // ','
        }
        if (scope.isPresent() && same.isEmpty()) {
            throw error("scope= needs same=", scopeAt);
        }
        return new ResourceRequest(complex, amount, id, same, scope, filters);
    }

    /** Grid Engine's RSMAP manual: same= takes id or the name of a configured complex. */
    private Same same(String value, int at) throws ParseException {
        if (value.equals(Same.ID)) {
            return new Same(Same.ID);
        }
        Complex c = table.find(value).orElseThrow(() -> error("same= takes id or a configured complex, and '"
                + value + "' is neither", at));
        if (c.isResourceMap()) {
            throw error("same= cannot name resource map '" + c.name() + "': no instance carries it as a characteristic",
                    at);
        }
        return new Same(c.name());
    }

    /** Grid Engine's RSMAP manual: defined, requestable, neither a consumable nor a resource map; value read with its type. */
    private CharacteristicFilter filter(String name, int nameAt, int vstart, int vend) throws ParseException {
        Complex c = table.find(name).orElseThrow(() -> error("unknown parameter '" + name
                + "' (neither id, same, scope nor a defined complex)", nameAt));
        if (c.isResourceMap()) {
            throw error("'" + c.name() + "' is a resource map and cannot be matched as a characteristic", nameAt);
        }
        if (!c.requestable().isRequestable()) {
            throw error("complex '" + c.name() + "' is not requestable", nameAt);
        }
        if (c.consumable().isConsumable()) {
            throw error("complex '" + c.name() + "' is a consumable and cannot be matched as a characteristic",
                    nameAt);
        }
        for (int i = vstart; i < vend && c.type() != ValueType.RESTRING; i++) {
            char x = in.charAt(i);
            if (x == '(' || x == ')' || x == '=') {
                // Grid Engine's RSMAP manual: a char-value never holds these, so a request naming one could never match
                throw error("'" + x + "' cannot appear in a characteristic value", i);
            }
        }
        Value v = Value.parse(c.type(), in, vstart, vend);
        Optional<Expression> pattern = c.type() == ValueType.RESTRING
                ? Optional.of(Expression.parse(in, vstart, vend, limits)) : Optional.empty();
        return new CharacteristicFilter(c, v, pattern);
    }

    private void checkLength(int from, int to) throws ParseException {
        if (to - from > limits.maxTokenChars()) {
            throw error("value longer than " + limits.maxTokenChars() + " characters", from);
        }
    }

    private void checkOnce(Set<String> seen, String name, int at) throws ParseException {
        if (!seen.add(name)) {
            throw error("parameter '" + name + "' is given twice", at);
        }
    }

    /** Where a value ends: PLAIN at ',', '[' or a blank; PATTERN at ',' or a blank; PARAMETER at ',' or ']'. */
    private enum Stop { PLAIN, PATTERN, PARAMETER }

    /**
     * The end of a value, outside brackets and parentheses so that expressions such as
     * {@code (a|b)&gpu[01]} stay whole. A backslash protects the next character.
     */
    private int valueEnd(Stop stop) throws ParseException {
        StringBuilder open = new StringBuilder();
        for (int i = pos; i < in.length(); i++) {
            char c = in.charAt(i);
            if (c == '\\' && i + 1 < in.length()) {
                i++;
                continue;
            }
            boolean outside = open.length() == 0;
            if (outside && (c == ',' || (stop == Stop.PARAMETER && c == ']')
                    || (stop != Stop.PARAMETER && Chars.isSpace(c)) || (stop == Stop.PLAIN && c == '['))) {
                return i;
            }
            char top = outside ? 0 : open.charAt(open.length() - 1);
            if (c == '[' && stop != Stop.PLAIN) {
                int close = classEnd(i);
                if (close > 0) {
                    i = close; // a character class such as [[] or []a] is part of the pattern
                    continue;
                }
            }
            if (c == '[' || c == '(') {
                if (open.length() >= limits.maxExpressionDepth()) {
                    throw error("brackets nested deeper than " + limits.maxExpressionDepth() + " levels", i);
                }
                open.append(c);
            } else if ((c == ']' && top == '[') || (c == ')' && top == '(')) {
                open.setLength(open.length() - 1);
            } else if (c == ']' && top == '(' && stop == Stop.PARAMETER) {
                return i; // the list closes over an unclosed '(': the expression parser says which
            }
        }
        return in.length();
    }

    /** The index of the ']' closing a character class that opens at {@code at}, as Glob reads it, or -1. */
    private int classEnd(int at) {
        int i = at + 1;
        if (i < in.length() && in.charAt(i) == '!') {
            i++;
        }
        if (i < in.length() && in.charAt(i) == ']') {
            i++; // a leading ']' is a member
        }
        for (; i < in.length(); i++) {
            char c = in.charAt(i);
            if (c == '\\') {
                i++;
            } else if (c == ']') {
                return i;
            } else if (c == ',' || Chars.isSpace(c)) {
                return -1;
            }
        }
        return -1;
    }

    private void skipBlank() {
        while (pos < in.length() && Chars.isSpace(in.charAt(pos))) {
            pos++;
        }
    }

    private ParseException error(String problem, int at) {
        return new ParseException(problem, in, at);
    }
}
