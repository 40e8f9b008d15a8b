// Reads a node filter: a small recursive-descent parser, bounded in length, terms and depth.
package rsmap.node;

import java.util.ArrayList;
import java.util.List;
import rsmap.Chars;
import rsmap.Hex;
import rsmap.Limits;
import rsmap.ParseException;

/**
 * The grammar (docs/filters.md "Syntax"); blanks may surround every token:
 * <pre>
 * filter     := or
 * or         := and ( '||' and )*                      lowest precedence
 * and        := unary ( '&amp;&amp;' unary )*
 * unary      := '!' unary | '(' or ')' | comparison     highest precedence
 * comparison := name op literal | name 'in' '[' literal ( ',' literal )* ']'
 * op         := '==' | '!=' | '&lt;' | '&lt;=' | '&gt;' | '&gt;='
 * literal    := '"' ( char | '\"' | '\\' )* '"' | number | version | 'true' | 'false'
 * name       := ( letter | '_' ) ( letter | digit | '_' | '.' | '-' )*     ASCII
 * </pre>
 * Never an eval of a scripting language: this is the whole language. With declared types, a
 * comparison whose literal cannot be a value of the attribute's type is refused here, at the literal.
 */
final class FilterParser {
    private static final int MAX_NAME = 256;

    private final String in;
    private final AttributeTypes types;
    private final Limits limits;
    private int pos;
    private int terms;

    FilterParser(String in, AttributeTypes types, Limits limits) {
        this.in = in;
        this.types = types;
        this.limits = limits;
    }

    Condition parse() throws ParseException {
        if (in.length() > limits.maxFilterChars()) {
            throw error("filter longer than " + limits.maxFilterChars() + " characters", limits.maxFilterChars());
        }
        skipBlank();
        if (pos == in.length()) {
            throw error("empty filter", pos);
        }
        Condition c = or(0);
        skipBlank();
        if (pos < in.length()) {
            throw error(peek() == ')' ? "')' without a matching '('" : "unexpected " + found() + " after "
                    + "a comparison (join comparisons with && or ||)", pos);
        }
        return c;
    }

    private Condition or(int depth) throws ParseException {
        List<Condition> terms = new ArrayList<>();
        terms.add(and(depth));
        while (operator("||")) {
            terms.add(and(depth));
        }
        return terms.size() == 1 ? terms.get(0) : new Condition.Any(terms);
    }

    private Condition and(int depth) throws ParseException {
        List<Condition> terms = new ArrayList<>();
        terms.add(unary(depth));
        while (operator("&&")) {
            terms.add(unary(depth));
        }
        return terms.size() == 1 ? terms.get(0) : new Condition.All(terms);
    }

    /** Whether {@code op} comes next (consumed); a lone '&' or '|' is refused. */
    private boolean operator(String op) throws ParseException {
        skipBlank();
        if (in.startsWith(op, pos)) {
            pos += 2;
            return true;
        }
        if (pos < in.length() && peek() == op.charAt(0)) {
            throw error("'" + op.charAt(0) + "' is not an operator; write " + op, pos);
        }
        return false;
    }

    private Condition unary(int depth) throws ParseException {
        skipBlank();
        if (depth >= limits.maxExpressionDepth()) {
            throw error("filter nested deeper than " + limits.maxExpressionDepth() + " levels", pos);
        }
        if (pos < in.length() && peek() == '!' && !in.startsWith("!=", pos)) {
            pos++;
            return new Condition.Not(unary(depth + 1));
        }
        if (pos < in.length() && peek() == '(') {
            int open = pos++;
            Condition inner = or(depth + 1);
            skipBlank();
            if (pos == in.length() || peek() != ')') {
                throw error(pos == in.length() ? "'(' without a matching ')'"
                        : "expected ')' or an operator, found " + found(), pos == in.length() ? open : pos);
            }
            pos++;
            return inner;
        }
        return comparison();
    }

    private Comparison comparison() throws ParseException {
        int nameAt = pos;
        String name = name();
        skipBlank();
        int opAt = pos;
        Op op = op(name);
        AttributeType type = name.equals(NodeAttributes.HOST) ? AttributeType.STRING
                : types.typeOf(name).orElse(null);
        if (op.isOrdering() && type != null && !type.isOrdered()) {
            throw error("'" + op + "' orders numbers and versions, and '" + name + "' is "
                    + (name.equals(NodeAttributes.HOST) ? "the host name" : "declared " + type), opAt);
        }
        count(nameAt);
        skipBlank();
        List<Literal> literals = new ArrayList<>();
        if (op == Op.IN) {
            int open = pos;
            if (pos == in.length() || peek() != '[') {
                throw error("expected '[' after in, found " + found(), pos);
            }
            pos++;
            do {
                skipBlank();
                literals.add(literal(name, op, type));
                skipBlank();
                if (pos == in.length()) {
                    throw error("'[' without a matching ']'", open);
                }
            } while (take(','));
            if (peek() != ']') {
                throw error("expected ',' or ']' in the list, found " + found(), pos);
            }
            pos++;
        } else {
            literals.add(literal(name, op, type));
        }
        return new Comparison(name, op, literals);
    }

    private String name() throws ParseException {
        int start = pos;
        while (pos < in.length() && pos - start <= MAX_NAME && nameChar(peek(), pos == start)) {
            pos++;
        }
        if (pos - start > MAX_NAME) {
            throw error("attribute name longer than " + MAX_NAME + " characters", start);
        }
        String name = in.substring(start, pos);
        if (name.isEmpty() || name.equals("in") || name.equals("true") || name.equals("false")) {
            pos = start;
            throw error(pos == in.length() ? "filter ends where an attribute name is expected"
                    : "expected an attribute name, found " + (name.isEmpty() ? found() : "'" + name + "'"), start);
        }
        return name;
    }

    private static boolean nameChar(char c, boolean first) {
        return c < 128 && (Character.isLetter(c) || c == '_' || !first && (c >= '0' && c <= '9' || c == '.'
                || c == '-'));
    }

    private Op op(String name) throws ParseException {
        int at = pos;
        for (String s : new String[] {"==", "!=", "<=", ">=", "<", ">"}) {
            if (in.startsWith(s, pos)) {
                pos += s.length();
                return s.equals("==") ? Op.EQ : s.equals("!=") ? Op.NE : s.equals("<=") ? Op.LE
                        : s.equals(">=") ? Op.GE : s.equals("<") ? Op.LT : Op.GT;
            }
        }
        if (in.startsWith("in", pos) && (pos + 2 == in.length() || !nameChar(in.charAt(pos + 2), false))) {
            pos += 2;
            return Op.IN;
        }
        if (pos < in.length() && peek() == '=') {
            throw error("'=' is not an operator; compare with ==", at);
        }
        throw error("expected ==, !=, <, <=, >, >= or in after '" + name + "', found " + found(), at);
    }

    /** A literal, checked against the operator and the attribute's declared type (null: undeclared). */
    private Literal literal(String name, Op op, AttributeType type) throws ParseException {
        int at = pos;
        Literal l;
        if (pos < in.length() && peek() == '"') {
            l = Literal.string(string());
        } else if (pos < in.length() && (isDigit(peek()) || (peek() == '-' || peek() == '+')
                && pos + 1 < in.length() && isDigit(in.charAt(pos + 1)))) {
            int start = pos++;
            while (pos < in.length()
                    && (isDigit(peek()) || peek() == '.' || peek() < 128 && Character.isLetter(peek()))) {
                checkLength(start);
                pos++;
            }
            try {
                l = Literal.numeric(in.substring(start, pos));
            } catch (ParseException e) {
                throw error(e.problem(), start + e.offset());
            }
        } else if (keyword("true") || keyword("false")) {
            l = Literal.bool(Chars.keyword(in.substring(at, pos), "true"));
        } else {
            throw error(pos == in.length() ? "filter ends where a value is expected"
                    : "expected a value (a \"string\", a number, a version, true or false), found " + found(), pos);
        }
        if (op.isOrdering() && l.kind() != Literal.Kind.NUMERIC) {
            throw error("'" + op + "' orders numbers and versions, not " + l.describe().substring(2) + "s", at);
        }
        if (type != null && l.as(type).isEmpty()) {
            throw error("'" + name + "' is " + (name.equals(NodeAttributes.HOST) ? "the host name, a string"
                    : "declared " + type) + ", and " + l + " is " + l.describe(), at);
        }
        count(at);
        return l;
    }

    private boolean keyword(String word) {
        int end = pos + word.length();
        if (end <= in.length() && Chars.keyword(in.substring(pos, end), word)
                && (end == in.length() || !nameChar(in.charAt(end), false))) {
            pos = end;
            return true;
        }
        return false;
    }

    /** A double-quoted string; escapes {@code \"} and {@code \\} only; no control characters or lone surrogates. */
    private String string() throws ParseException {
        int open = pos++;
        StringBuilder b = new StringBuilder();
        while (true) {
            if (pos == in.length()) {
                throw error("string without its closing '\"'", open);
            }
            checkLength(open);
            char c = peek();
            if (c == '"') {
                pos++;
                return b.toString();
            }
            if (c == '\\') {
                if (pos + 1 == in.length() || (in.charAt(pos + 1) != '"' && in.charAt(pos + 1) != '\\')) {
                    throw error("'\\' escapes only '\"' and '\\' in a string", pos);
                }
                b.append(in.charAt(pos + 1));
                pos += 2;
                continue;
            }
            if (Character.isISOControl(c)) {
                StringBuilder what = Hex.appendUpper(new StringBuilder("control character U+"), c, 4);
                throw error(what.append(" in a string").toString(), pos);
            }
            if (Character.isSurrogate(c)) {
                if (!Character.isHighSurrogate(c) || pos + 1 == in.length()
                        || !Character.isLowSurrogate(in.charAt(pos + 1))) {
                    throw error("a string holds text, not a lone surrogate", pos);
                }
                b.append(c);
                pos++;
                c = peek();
            }
            b.append(c);
            pos++;
        }
    }

    private void checkLength(int start) throws ParseException {
        if (pos - start >= limits.maxTokenChars()) {
            throw error("value longer than " + limits.maxTokenChars() + " characters", start);
        }
    }

    private void count(int at) throws ParseException {
        if (++terms > limits.maxFilterTerms()) {
            throw error("filter with more than " + limits.maxFilterTerms() + " comparisons and values", at);
        }
    }

    private boolean take(char c) {
        if (pos < in.length() && peek() == c) {
            pos++;
            return true;
        }
        return false;
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private char peek() {
        return in.charAt(pos);
    }

    /** The offending character, quoted; "the end" at the end. */
    private String found() {
        if (pos >= in.length()) {
            return "the end";
        }
        int cp = in.codePointAt(pos);
        return "'" + new String(Character.toChars(cp)) + "'";
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
