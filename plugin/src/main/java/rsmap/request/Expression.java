// The wildcard expression of Grid Engine's types(1): shell patterns joined by !, & and |, grouped
// with brackets. Used by id= and by RESTRING values.
package rsmap.request;

import java.util.ArrayList;
import java.util.List;
import rsmap.Chars;
import rsmap.Limits;
import rsmap.ParseException;

/**
 * A parsed expression (types(1) "expression" and "pattern").
 *
 * <pre>
 * expression := or
 * or         := and ( '|' and )*        lowest precedence
 * and        := not ( '&amp;' not )*
 * not        := '!' not | primary        highest precedence
 * primary    := '(' or ')' | pattern
 * pattern    := ( '*' | '?' | '[' class ']' | '\' char | other char )+
 * </pre>
 *
 * So {@code a|b&c} reads {@code a|(b&c)} and {@code !a&b} reads {@code (!a)&b}. In a pattern
 * {@code *} matches any run of characters (also none), {@code ?} exactly one, {@code [...]} one of
 * the listed characters or {@code a-z} ranges ({@code [!...]} one not listed; {@code ^} is an
 * ordinary character, as types(1) says), {@code \} makes the next character literal, {@code .} is
 * just a dot. A pattern matches the whole text, case-sensitively. Whitespace is never part of an
 * expression. Two expressions are equal when their text is.
 */
public final class Expression {
    private final String text;
    private final Node root;

    private Expression(String text, Node root) {
        this.text = text;
        this.root = root;
    }

    public static Expression parse(String text) throws ParseException {
        return parse(text, 0, text.length(), Limits.DEFAULT);
    }

    /** Parses {@code input[start, end)}; errors point into {@code input}. */
    public static Expression parse(String input, int start, int end, Limits limits) throws ParseException {
        if (start == end) {
            throw new ParseException("empty expression", input, start);
        }
        Parser p = new Parser(input, start, end, limits);
        Node root = p.or(0);
        if (p.pos < end) {
            throw new ParseException(p.peek() == ')' ? "')' without a matching '('"
                    : "unexpected '" + p.peek() + "' in expression", input, p.pos);
        }
        return new Expression(input.substring(start, end), root);
    }

    /** Whether {@code subject} satisfies the expression. */
    public boolean matches(String subject) {
        return root.matches(subject);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Expression && ((Expression) o).text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    /** The expression as written. */
    @Override
    public String toString() {
        return text;
    }

    interface Node {
        boolean matches(String s);
    }

    private static final class Or implements Node {
        private final Node[] terms;

        Or(List<Node> terms) {
            this.terms = terms.toArray(new Node[0]);
        }

        @Override
        public boolean matches(String s) {
            for (Node n : terms) {
                if (n.matches(s)) {
                    return true;
                }
            }
            return false;
        }
    }

    private static final class And implements Node {
        private final Node[] terms;

        And(List<Node> terms) {
            this.terms = terms.toArray(new Node[0]);
        }

        @Override
        public boolean matches(String s) {
            for (Node n : terms) {
                if (!n.matches(s)) {
                    return false;
                }
            }
            return true;
        }
    }

    private static final class Not implements Node {
        private final Node inner;

        Not(Node inner) {
            this.inner = inner;
        }

        @Override
        public boolean matches(String s) {
            return !inner.matches(s);
        }
    }

    private static final class Parser {
        private final String in;
        private final int end;
        private final Limits limits;
        private int pos;

        Parser(String in, int start, int end, Limits limits) {
            this.in = in;
            this.pos = start;
            this.end = end;
            this.limits = limits;
        }

        char peek() {
            return pos < end ? in.charAt(pos) : '\0';
        }

        Node or(int depth) throws ParseException {
            List<Node> terms = new ArrayList<>();
            terms.add(and(depth));
            while (pos < end && peek() == '|') {
                pos++;
                terms.add(and(depth));
            }
            return terms.size() == 1 ? terms.get(0) : new Or(terms);
        }

        Node and(int depth) throws ParseException {
            List<Node> terms = new ArrayList<>();
            terms.add(not(depth));
            while (pos < end && peek() == '&') {
                pos++;
                terms.add(not(depth));
            }
            return terms.size() == 1 ? terms.get(0) : new And(terms);
        }

        Node not(int depth) throws ParseException {
            if (depth >= limits.maxExpressionDepth()) {
                throw new ParseException("expression nested deeper than " + limits.maxExpressionDepth()
                        + " levels", in, pos);
            }
            if (pos < end && peek() == '!') {
                pos++;
                return new Not(not(depth + 1));
            }
            if (pos < end && peek() == '(') {
                int open = pos++;
                Node inner = or(depth + 1);
                if (pos >= end || peek() != ')') {
                    throw new ParseException("'(' without a matching ')'", in, open);
                }
                pos++;
                return inner;
            }
            return pattern();
        }

        Node pattern() throws ParseException {
            int start = pos;
            Glob.Builder b = new Glob.Builder();
            while (pos < end) {
                char c = in.charAt(pos);
                if (c == '!' || c == '&' || c == '|' || c == '(' || c == ')') {
                    break;
                }
                if (Chars.isSpace(c)) {
                    throw new ParseException("whitespace in expression", in, pos);
                }
                if (pos - start > limits.maxTokenChars()) {
                    throw new ParseException("pattern longer than " + limits.maxTokenChars() + " characters", in,
                            start);
                }
                if (c == '*') {
                    b.star();
                    pos++;
                } else if (c == '?') {
                    b.any();
                    pos++;
                } else if (c == '[') {
                    pos = b.charClass(in, pos, end);
                } else if (c == '\\') {
                    if (pos + 1 >= end) {
                        throw new ParseException("'\\' at the end of a pattern escapes nothing", in, pos);
                    }
                    int cp = in.codePointAt(pos + 1);
                    b.literal(cp);
                    pos += 1 + Character.charCount(cp);
                } else {
                    int cp = in.codePointAt(pos);
                    b.literal(cp);
                    pos += Character.charCount(cp);
                }
            }
            if (pos == start) {
                throw new ParseException(pos >= end ? "expression ends where a pattern is expected"
                        : "expected a pattern, found '" + in.charAt(pos) + "'", in, pos);
            }
            return b.build();
        }
    }
}
