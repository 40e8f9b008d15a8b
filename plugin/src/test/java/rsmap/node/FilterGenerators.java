// Seeded random node filters and hosts for the property tests and the benchmark.
package rsmap.node;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

final class FilterGenerators {
    static final String[] NAMES = {"cpu_speed", "arch", "kernel", "mem", "ib", "rack.row-1", "host"};
    private static final String[] STRINGS = {"x86_64", "aarch64", "ppc64le", "", "a\"b", "back\\slash", "ü", "😀",
        "node01", "x"};
    private static final String[] NUMBERS = {"2GHz", "1.8GHz", "2400MHz", "64G", "64GiB", "1kB", "16", "-5", "0",
        "2.5", "6.5"};
    private static final String[] VERSIONS = {"6.5.2", "6.10", "6.5.10", "5.14.0", "6.5"};

    private FilterGenerators() {
    }

    /** A random condition tree of at most {@code depth} levels of && || !. */
    static Condition condition(Random rnd, int depth) {
        int pick = depth == 0 ? 0 : rnd.nextInt(5);
        switch (pick) {
            case 1:
                return new Condition.Not(condition(rnd, depth - 1));
            case 2:
            case 3: {
                List<Condition> terms = new ArrayList<>();
                int n = 2 + rnd.nextInt(3);
                for (int i = 0; i < n; i++) {
                    terms.add(condition(rnd, depth - 1));
                }
                return pick == 2 ? new Condition.All(terms) : new Condition.Any(terms);
            }
            default:
                return comparison(rnd);
        }
    }

    static Comparison comparison(Random rnd) {
        String name = NAMES[rnd.nextInt(NAMES.length)];
        if (name.equals("host")) {
            Op op = new Op[] {Op.EQ, Op.NE, Op.IN}[rnd.nextInt(3)];
            List<Literal> ls = new ArrayList<>();
            int n = op == Op.IN ? 1 + rnd.nextInt(3) : 1;
            for (int i = 0; i < n; i++) {
                ls.add(Literal.string(STRINGS[rnd.nextInt(STRINGS.length)]));
            }
            return new Comparison(name, op, ls);
        }
        Op op = Op.values()[rnd.nextInt(Op.values().length)];
        List<Literal> ls = new ArrayList<>();
        int n = op == Op.IN ? 1 + rnd.nextInt(3) : 1;
        for (int i = 0; i < n; i++) {
            ls.add(literal(rnd, op.isOrdering()));
        }
        return new Comparison(name, op, ls);
    }

    static Literal literal(Random rnd, boolean ordered) {
        try {
            switch (ordered ? 1 + rnd.nextInt(2) : rnd.nextInt(4)) {
                case 0:
                    return Literal.string(STRINGS[rnd.nextInt(STRINGS.length)]);
                case 1:
                    return Literal.numeric(NUMBERS[rnd.nextInt(NUMBERS.length)]);
                case 2:
                    return Literal.numeric(VERSIONS[rnd.nextInt(VERSIONS.length)]);
                default:
                    return Literal.bool(rnd.nextBoolean());
            }
        } catch (rsmap.ParseException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * The condition written another way: redundant parentheses, random blanks, keywords in other case;
     * it must parse to the same tree as the canonical form.
     */
    static String scruffy(Random rnd, Condition c) {
        String blank = new String[] {"", " ", "  ", "\t", "\n", "\u00a0"}[rnd.nextInt(6)];
        String s;
        switch (c.kind()) {
            case ALL:
            case ANY: {
                List<Condition> terms = c.kind() == Condition.Kind.ALL ? ((Condition.All) c).terms()
                        : ((Condition.Any) c).terms();
                StringBuilder b = new StringBuilder();
                for (Condition t : terms) {
                    if (b.length() > 0) {
                        b.append(blank).append(c.kind() == Condition.Kind.ALL ? "&&" : "||").append(blank);
                    }
                    // an && inside || needs no brackets, but any term may have them; nested same-kind ones
                    // must have them (they flatten back into this list)
                    boolean wrap = t.kind() == Condition.Kind.ANY || t.kind() == c.kind() || rnd.nextInt(4) == 0;
                    b.append(wrap ? "(" + scruffy(rnd, t) + ")" : scruffy(rnd, t));
                }
                s = b.toString();
                break;
            }
            case NOT: {
                Condition o = ((Condition.Not) c).operand();
                boolean bare = o.kind() == Condition.Kind.COMPARISON || o.kind() == Condition.Kind.NOT;
                s = "!" + blank + (bare && rnd.nextBoolean() ? scruffy(rnd, o) : "(" + scruffy(rnd, o) + ")");
                break;
            }
            default: {
                Comparison k = (Comparison) c;
                // "in" is a word: a blank must part it from the name
                String around = k.op() == Op.IN && blank.isEmpty() ? " " : blank;
                StringBuilder b = new StringBuilder(k.attribute()).append(around).append(k.op()).append(blank);
                if (k.op() == Op.IN) {
                    b.append('[');
                    for (int i = 0; i < k.literals().size(); i++) {
                        b.append(i == 0 ? blank : "," + blank).append(written(rnd, k.literals().get(i)));
                    }
                    b.append(blank).append(']');
                } else {
                    b.append(written(rnd, k.literals().get(0)));
                }
                s = b.toString();
            }
        }
        return s;
    }

    private static String written(Random rnd, Literal l) {
        String s = l.toString();
        return l.kind() == Literal.Kind.BOOLEAN && rnd.nextBoolean() ? s.toUpperCase(java.util.Locale.ROOT) : s;
    }

    /** A host with some of the attributes, typed by inference. */
    static Node node(Random rnd, int index) {
        Map<String, String> m = new LinkedHashMap<>();
        if (rnd.nextInt(4) > 0) {
            m.put("cpu_speed", NUMBERS[rnd.nextInt(4)]);
        }
        if (rnd.nextInt(4) > 0) {
            m.put("arch", STRINGS[rnd.nextInt(3)]);
        }
        if (rnd.nextInt(4) > 0) {
            m.put("kernel", VERSIONS[rnd.nextInt(VERSIONS.length)]);
        }
        if (rnd.nextBoolean()) {
            m.put("mem", NUMBERS[3 + rnd.nextInt(3)]);
        }
        if (rnd.nextBoolean()) {
            m.put("ib", rnd.nextBoolean() ? "true" : "false");
        }
        try {
            return Node.of(index % 7 == 0 ? "x" : "node" + index, NodeAttributes.parse(m, AttributeTypes.NONE));
        } catch (rsmap.ParseException e) {
            throw new AssertionError(e);
        }
    }
}
