// One shell pattern of types(1): literal characters, *, ? and [...] classes, matched in linear-ish time.
package rsmap.request;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import rsmap.Chars;
import rsmap.ParseException;

/**
 * A compiled pattern. Matching walks subject and pattern once, remembering only the last {@code *}
 * to backtrack to, so no pattern can make it exponential.
 */
final class Glob implements Expression.Node {
    private static final int STAR = -1;
    private static final int ANY = -2;
    private static final int CLASS = -3;

    /** Code points, or STAR / ANY / CLASS (then {@code classes[classAt[p]]} holds the ranges). */
    private final int[] ops;
    private final int[] classAt;
    private final int[][] classes;
    private final boolean[] negated;

    private Glob(int[] ops, int[][] classes, boolean[] negated) {
        this.ops = ops;
        this.classes = classes;
        this.negated = negated;
        this.classAt = new int[ops.length];
        for (int p = 0, k = 0; p < ops.length; p++) {
            if (ops[p] == CLASS) {
                classAt[p] = k++;
            }
        }
    }

    @Override
    public boolean matches(String s) {
        int p = 0;
        int i = 0;
        int starP = -1;
        int starI = -1;
        while (i < s.length()) {
            if (p < ops.length && ops[p] == STAR) {
                starP = ++p;
                starI = i;
                continue;
            }
            int cp = s.codePointAt(i);
            if (p < ops.length && one(p, cp)) {
                p++;
                i += Character.charCount(cp);
                continue;
            }
            if (starP < 0) {
                return false;
            }
            p = starP;
            starI += Character.charCount(s.codePointAt(starI));
            i = starI;
        }
        while (p < ops.length && ops[p] == STAR) {
            p++;
        }
        return p == ops.length;
    }

    private boolean one(int p, int cp) {
        int op = ops[p];
        if (op == ANY) {
            return true;
        }
        if (op == CLASS) {
            int k = classAt[p];
            int[] ranges = classes[k];
            boolean in = false;
            for (int r = 0; r < ranges.length; r += 2) {
                if (cp >= ranges[r] && cp <= ranges[r + 1]) {
                    in = true;
                    break;
                }
            }
            return in != negated[k];
        }
        return op == cp;
    }

    /** Collects the elements of one pattern. */
    static final class Builder {
        private int[] ops = new int[8];
        private int n;
        private final List<int[]> classes = new ArrayList<>();
        private final List<Boolean> negated = new ArrayList<>();

        void literal(int cp) {
            add(cp);
        }

        void any() {
            add(ANY);
        }

        void star() {
            if (n == 0 || ops[n - 1] != STAR) { // "**" is "*"
                add(STAR);
            }
        }

        /** Reads {@code [...]} starting at {@code in[pos] == '['}; returns the index after {@code ]}. */
        int charClass(String in, int pos, int end) throws ParseException {
            int open = pos++;
            boolean neg = false;
            if (pos < end && in.charAt(pos) == '!') {
                neg = true;
                pos++;
            }
            List<Integer> ranges = new ArrayList<>();
            boolean first = true;
            while (true) {
                if (pos >= end) {
                    throw new ParseException("'[' without a matching ']'", in, open);
                }
                int cp = in.codePointAt(pos);
                if (cp == ']' && !first) {
                    pos++;
                    break;
                }
                first = false;
                if (cp == '\\' && pos + 1 < end) {
                    pos++;
                    cp = in.codePointAt(pos);
                }
                if (Chars.isSpace(cp)) {
                    throw new ParseException("whitespace in expression", in, pos);
                }
                pos += Character.charCount(cp);
                int hi = cp;
                if (pos + 1 < end && in.charAt(pos) == '-' && in.charAt(pos + 1) != ']') {
                    hi = in.codePointAt(pos + 1);
                    if (hi < cp) {
                        throw new ParseException("range '" + new String(Character.toChars(cp)) + "-"
                                + new String(Character.toChars(hi)) + "' runs backwards", in, pos - 1);
                    }
                    pos += 1 + Character.charCount(hi);
                }
                ranges.add(cp);
                ranges.add(hi);
            }
            classes.add(ranges.stream().mapToInt(Integer::intValue).toArray());
            negated.add(neg);
            add(CLASS);
            return pos;
        }

        Glob build() {
            boolean[] neg = new boolean[negated.size()];
            for (int k = 0; k < neg.length; k++) {
                neg[k] = negated.get(k);
            }
            return new Glob(Arrays.copyOf(ops, n), classes.toArray(new int[0][]), neg);
        }

        private void add(int op) {
            if (n == ops.length) {
                ops = Arrays.copyOf(ops, n * 2);
            }
            ops[n++] = op;
        }
    }
}
