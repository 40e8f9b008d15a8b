// Seeded random generators of valid host values, requests and expressions for the property tests.
package rsmap;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Pattern;

final class Generators {
    private static final String[] PATTERNS = {"a", "b", "a*", "*b", "?", "gpu1*", "gpu[12]*", "*a*", "x.y",
        "a\\*", "[!a]*", "??"};

    private Generators() {
    }

    /** A valid complex_values string over the fixture table, with random blanks and continuations. */
    static String hostValue(Random rnd) {
        List<String> entries = new ArrayList<>();
        if (rnd.nextInt(4) == 0) {
            entries.add("mem_free=" + (1 + rnd.nextInt(512)) + "G");
        }
        String[] maps = {"gpu", "nic", "lic"};
        for (String m : maps) {
            if (rnd.nextBoolean()) {
                entries.add(rnd.nextInt(5) == 0 ? m + "=" + rnd.nextInt(9) : m + "=" + idList(rnd));
            }
        }
        if (entries.isEmpty()) {
            entries.add("gpu=" + idList(rnd));
        }
        java.util.Collections.shuffle(entries, rnd);
        return String.join(rnd.nextBoolean() ? "," : ", \\\n ", entries);
    }

    private static String idList(Random rnd) {
        int distinct = 1 + rnd.nextInt(6);
        Map<String, String> blocks = new HashMap<>();
        List<String> specs = new ArrayList<>();
        int count = 0;
        for (int d = 0; d < distinct; d++) {
            String id = switch (rnd.nextInt(4)) {
                case 0 -> Integer.toString(rnd.nextInt(12));
                case 1 -> "gpu" + rnd.nextInt(4) + (rnd.nextBoolean() ? "a" : "b");
                case 2 -> "ü" + rnd.nextInt(3);
                default -> "x:" + rnd.nextInt(5) + "/y";
            };
            if (rnd.nextInt(5) == 0) {
                int lo = 100 + rnd.nextInt(20); // bare ranges never meet the annotated ids below
                int hi = lo + rnd.nextInt(5);
                specs.add(lo + "-" + hi);
                count += hi - lo + 1;
                continue;
            }
            String block = blocks.computeIfAbsent(id, k -> rnd.nextInt(3) == 0 ? "" : block(rnd));
            int shares = 1 + rnd.nextInt(4);
            for (int s = 0; s < shares; s++) {
                specs.add(id + block);
                count++;
            }
        }
        // Repeated ids must carry the same block, and ranges may overlap ids listed bare: keep ranges
        // out of the way of annotated ids by construction above (ranges are bare, annotated ids are
        // never purely numeric ranges unless bare).
        java.util.Collections.shuffle(specs, rnd);
        return count + "(" + String.join(rnd.nextBoolean() ? " " : "  \\\n   ", specs) + ")";
    }

    private static String block(Random rnd) {
        List<String> cs = new ArrayList<>();
        if (rnd.nextBoolean()) {
            cs.add("memory=" + (1 + rnd.nextInt(80)) + "GgMm".charAt(rnd.nextInt(4)));
        }
        if (rnd.nextBoolean()) {
            cs.add("model=" + (rnd.nextBoolean() ? "A100" : "h100"));
        }
        if (rnd.nextBoolean()) {
            cs.add("numa_node=" + rnd.nextInt(4));
        }
        if (rnd.nextBoolean()) {
            cs.add("devices=/dev/nvidia" + rnd.nextInt(4) + (rnd.nextBoolean() ? ":rw;/dev/nvidiactl" : ""));
        }
        if (cs.isEmpty()) {
            cs.add("gmem=1G");
        }
        java.util.Collections.shuffle(cs, rnd);
        return "[" + String.join(rnd.nextBoolean() ? "," : " ,\\\n ", cs) + "]";
    }

    /** A valid request list over the fixture table. */
    static String request(Random rnd) {
        List<String> out = new ArrayList<>();
        for (String m : new String[] {"gpu", "nic", "lic"}) {
            if (rnd.nextBoolean() || (out.isEmpty() && m.equals("lic"))) {
                List<String> ps = new ArrayList<>();
                if (rnd.nextBoolean()) {
                    ps.add("id=" + expr(rnd, 3).minimal(0));
                }
                boolean same = rnd.nextBoolean();
                if (same) {
                    ps.add("same=" + (rnd.nextBoolean() ? "id" : "numa_node"));
                    if (rnd.nextBoolean()) {
                        ps.add("scope=" + (rnd.nextBoolean() ? "host" : "job"));
                    }
                }
                if (rnd.nextBoolean()) {
                    ps.add("memory=" + (1 + rnd.nextInt(80)) + "G");
                }
                if (rnd.nextBoolean()) {
                    ps.add("model=a100");
                }
                if (rnd.nextBoolean()) {
                    ps.add("family=" + expr(rnd, 2).minimal(0));
                }
                java.util.Collections.shuffle(ps, rnd);
                out.add(m + "=" + (1 + rnd.nextInt(8)) + (ps.isEmpty() ? "" : "[" + String.join(",", ps) + "]"));
            }
        }
        if (rnd.nextBoolean()) {
            out.add("arch=lx*");
        }
        java.util.Collections.shuffle(out, rnd);
        return String.join(",", out);
    }

    /** A random expression tree: op 0 pattern, 1 not, 2 and, 3 or. */
    record Expr(int op, String pattern, Expr left, Expr right) {
        boolean eval(String s) {
            return switch (op) {
                case 0 -> globRegex(pattern).matcher(s).matches();
                case 1 -> !left.eval(s);
                case 2 -> left.eval(s) && right.eval(s);
                default -> left.eval(s) || right.eval(s);
            };
        }

        String full() {
            return switch (op) {
                case 0 -> pattern;
                case 1 -> "!(" + left.full() + ")";
                case 2 -> "(" + left.full() + ")&(" + right.full() + ")";
                default -> "(" + left.full() + ")|(" + right.full() + ")";
            };
        }

        /** Printed with as few brackets as the precedence ! > & > | allows. */
        String minimal(int context) {
            int prec = switch (op) {
                case 0, 1 -> 3;
                case 2 -> 2;
                default -> 1;
            };
            String s = switch (op) {
                case 0 -> pattern;
                case 1 -> "!" + left.minimal(3);
                case 2 -> left.minimal(2) + "&" + right.minimal(3);
                default -> left.minimal(1) + "|" + right.minimal(2);
            };
            return prec < context ? "(" + s + ")" : s;
        }
    }

    static Expr expr(Random rnd, int depth) {
        int op = depth == 0 ? 0 : rnd.nextInt(4);
        if (op == 0) {
            return new Expr(0, PATTERNS[rnd.nextInt(PATTERNS.length)], null, null);
        }
        if (op == 1) {
            return new Expr(1, null, expr(rnd, depth - 1), null);
        }
        return new Expr(op, null, expr(rnd, depth - 1), expr(rnd, depth - 1));
    }

    /** The oracle: a glob of the generator's alphabet as a java.util.regex pattern. */
    static Pattern globRegex(String glob) {
        StringBuilder re = new StringBuilder();
        for (int i = 0; i < glob.length(); i++) {
            char c = glob.charAt(i);
            switch (c) {
                case '*' -> re.append(".*");
                case '?' -> re.append('.');
                case '\\' -> re.append(Pattern.quote(String.valueOf(glob.charAt(++i))));
                case '[' -> {
                    int close = glob.indexOf(']', i + 2);
                    String body = glob.substring(i + 1, close);
                    re.append('[').append(body.startsWith("!") ? "^" + body.substring(1) : body).append(']');
                    i = close;
                }
                default -> re.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile(re.toString(), Pattern.DOTALL);
    }
}
