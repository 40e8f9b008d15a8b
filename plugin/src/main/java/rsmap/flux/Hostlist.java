// An ordered list of host names in Flux RFC 29 form ("node[186-189],login1"): R's nodelist.
// Expanded on parsing, but never beyond Limits.maxInstances hosts, counted before anything is allocated.
package rsmap.flux;

import java.util.ArrayList;
import java.util.List;
import rsmap.Limits;
import rsmap.ParseException;

/**
 * An immutable hostlist: order matters and repeats are allowed (RFC 29). {@link #toString()} prints
 * the canonical compressed form: consecutive hosts that share a prefix before their trailing digits
 * (as Flux splits a host name) share one bracket, ascending runs become {@code lo-hi}.
 */
public final class Hostlist {
    private static final Hostlist EMPTY = new Hostlist(List.of());
    /** Ids in brackets: up to 18 digits, so that every id fits a long. */
    private static final int MAX_DIGITS = 18;

    private final List<String> hosts;

    private Hostlist(List<String> hosts) {
        this.hosts = hosts;
    }

    public static Hostlist empty() {
        return EMPTY;
    }

    /** A hostlist of these names, each checked as a host name of RFC 29. */
    public static Hostlist of(List<String> hosts) {
        for (String h : hosts) {
            if (h.isEmpty() || !h.chars().allMatch(Hostlist::hostChar)) {
                throw new IllegalArgumentException("not a host name (RFC 29): '" + h + "'");
            }
        }
        return hosts.isEmpty() ? EMPTY : new Hostlist(List.copyOf(hosts));
    }

    public static Hostlist parse(String text) throws ParseException {
        return parse(text, Limits.DEFAULT);
    }

    /**
     * Reads comma-separated expressions {@code prefix[idlist]suffix} (RFC 29). The idlist keeps its
     * order and repeats; the zero padding of its first id applies to all of them ({@code [00-2]} is
     * 00,01,02), and a later id may carry leading zeros only to that same width. Refused: empty items,
     * brackets that do not pair, more than one bracket in an expression, more hosts than
     * {@code limits.maxInstances()}, names longer than {@code limits.maxTokenChars()}.
     */
    public static Hostlist parse(String text, Limits limits) throws ParseException {
        if (text.length() > limits.maxInputChars()) {
            throw new ParseException("hostlist longer than " + limits.maxInputChars() + " characters", text, 0);
        }
        if (text.isEmpty()) {
            return EMPTY; // the empty expression is the empty list (RFC 29)
        }
        List<String> out = new ArrayList<>();
        int i = 0;
        while (true) {
            i = expression(text, i, limits, out);
            if (i == text.length()) {
                break;
            }
            i++; // the comma
            if (i == text.length()) {
                throw new ParseException("expected a host after ','", text, i);
            }
        }
        return new Hostlist(List.copyOf(out));
    }

    /** One {@code prefix[idlist]suffix} from {@code start}; returns the index of the ',' or the end. */
    private static int expression(String text, int start, Limits limits, List<String> out) throws ParseException {
        int i = start;
        while (i < text.length() && hostChar(text.charAt(i))) {
            i++;
        }
        String prefix = text.substring(start, i);
        if (i == text.length() || text.charAt(i) == ',') {
            if (prefix.isEmpty()) {
                throw new ParseException("expected a host, found " + (i == text.length() ? "the end" : "','"), text, i);
            }
            add(out, prefix, text, start, limits);
            return i;
        }
        if (text.charAt(i) != '[') {
            throw new ParseException("'" + text.charAt(i) + "' may not appear in a host name (RFC 29)", text, i);
        }
        int open = i;
        int close = text.indexOf(']', open);
        if (close < 0) {
            throw new ParseException("'[' without ']'", text, open);
        }
        int j = close + 1;
        while (j < text.length() && hostChar(text.charAt(j))) {
            j++;
        }
        String suffix = text.substring(close + 1, j);
        if (j < text.length() && text.charAt(j) != ',') {
            throw new ParseException("'" + text.charAt(j) + "' after ']': one bracket per host expression (RFC 29)",
                    text, j);
        }
        idlist(text, open + 1, close, prefix, suffix, limits, out);
        return j;
    }

    private static void idlist(String text, int from, int to, String prefix, String suffix, Limits limits,
            List<String> out) throws ParseException {
        if (from == to) {
            throw new ParseException("empty brackets", text, from);
        }
        int width = -1;
        int i = from;
        while (true) {
            int at = i;
            int end = digits(text, i, to);
            if (width < 0) {
                // the padding of the first id is kept for every id of the list (RFC 29)
                width = text.charAt(i) == '0' && end - i > 1 ? end - i : 0;
            }
            long lo = id(text, i, end, width);
            long hi = lo;
            i = end;
            if (i < to && text.charAt(i) == '-') {
                int hiAt = i + 1;
                end = digits(text, hiAt, to);
                hi = id(text, hiAt, end, width);
                i = end;
                if (hi < lo) {
                    throw new ParseException("range " + text.substring(at, end) + " goes down", text, hiAt);
                }
            }
            if (hi - lo + 1 > (long) limits.maxInstances() - out.size()) {
                throw new ParseException("more than " + limits.maxInstances() + " hosts", text, at);
            }
            for (long n = lo; n <= hi; n++) {
                add(out, prefix + pad(n, width) + suffix, text, at, limits);
            }
            if (i == to) {
                return;
            }
            if (text.charAt(i) != ',') {
                throw new ParseException("expected ',', '-' or ']' in an idlist, found '" + text.charAt(i) + "'", text, i);
            }
            i++;
            if (i == to) {
                throw new ParseException("expected an id after ','", text, i);
            }
        }
    }

    private static int digits(String text, int i, int to) throws ParseException {
        int j = i;
        while (j < to && text.charAt(j) >= '0' && text.charAt(j) <= '9') {
            j++;
        }
        if (j == i) {
            throw new ParseException("expected a decimal id in the brackets", text, i);
        }
        if (j - i > MAX_DIGITS) {
            throw new ParseException("id longer than " + MAX_DIGITS + " digits", text, i);
        }
        return j;
    }

    /** The id in {@code [i, end)}; a leading zero must pad it to the list's width exactly. */
    private static long id(String text, int i, int end, int width) throws ParseException {
        if (text.charAt(i) == '0' && end - i > 1 && end - i != width) {
            throw new ParseException("leading zeros in " + text.substring(i, end) + " do not match the width "
                    + width + " set by the first id (RFC 29)", text, i);
        }
        return Long.parseLong(text, i, end, 10);
    }

    private static void add(List<String> out, String host, String text, int at, Limits limits)
            throws ParseException {
        if (out.size() >= limits.maxInstances()) {
            throw new ParseException("more than " + limits.maxInstances() + " hosts", text, at);
        }
        if (host.length() > limits.maxTokenChars()) {
            throw new ParseException("host name longer than " + limits.maxTokenChars() + " characters", text, at);
        }
        out.add(host);
    }

    /** Printable, non-blank ASCII other than '[', ']' and ',' (RFC 29). */
    static boolean hostChar(int c) {
        return c > ' ' && c < 0x7f && c != '[' && c != ']' && c != ',';
    }

    private static String pad(long n, int width) {
        String s = Long.toString(n);
        return s.length() >= width ? s : "0".repeat(width - s.length()) + s;
    }

    /** The hosts in order. */
    public List<String> hosts() {
        return hosts;
    }

    public int size() {
        return hosts.size();
    }

    public boolean isEmpty() {
        return hosts.isEmpty();
    }

    public String get(int index) {
        return hosts.get(index);
    }

    /** This list followed by {@code other}'s hosts. */
    public Hostlist concat(Hostlist other) {
        List<String> all = new ArrayList<>(hosts);
        all.addAll(other.hosts);
        return all.isEmpty() ? EMPTY : new Hostlist(List.copyOf(all));
    }

    /**
     * Canonical: each host split as Flux does (prefix, trailing digits); a run of hosts with the same
     * prefix whose numbers can be printed at the width of the run's first number goes into one
     * bracket, consecutive ascending numbers as {@code lo-hi}; a lone host is printed as is.
     */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        int i = 0;
        while (i < hosts.size()) {
            if (s.length() > 0) {
                s.append(',');
            }
            Split first = Split.of(hosts.get(i));
            int j = i + 1;
            while (j < hosts.size() && first.joins(Split.of(hosts.get(j)))) {
                j++;
            }
            if (j == i + 1) {
                s.append(hosts.get(i));
            } else {
                s.append(first.prefix).append('[');
                int k = i;
                while (k < j) {
                    long lo = Split.of(hosts.get(k)).number;
                    int m = k + 1;
                    while (m < j && Split.of(hosts.get(m)).number == Split.of(hosts.get(m - 1)).number + 1) {
                        m++;
                    }
                    if (k > i) {
                        s.append(',');
                    }
                    s.append(pad(lo, first.width));
                    if (m - k > 1) {
                        s.append('-').append(pad(Split.of(hosts.get(m - 1)).number, first.width));
                    }
                    k = m;
                }
                s.append(']');
            }
            i = j;
        }
        return s.toString();
    }

    /**
     * A host name split at its trailing digits; {@code number < 0} when it has none (or too many to be
     * a long). {@code width} is the zero padding the digits show: their length if they open with a
     * zero, else 0.
     */
    private record Split(String prefix, String digits, long number, int width) {
        static Split of(String host) {
            int d = host.length();
            while (d > 0 && Character.isDigit(host.charAt(d - 1)) && host.charAt(d - 1) <= '9') {
                d--;
            }
            String digits = host.substring(d);
            if (digits.isEmpty() || digits.length() > MAX_DIGITS) {
                return new Split(host, "", -1, 0);
            }
            int width = digits.charAt(0) == '0' && digits.length() > 1 ? digits.length() : 0;
            return new Split(host.substring(0, d), digits, Long.parseLong(digits), width);
        }

        /** Whether {@code next} reads back unchanged in a bracket this split opens. */
        boolean joins(Split next) {
            return number >= 0 && next.number >= 0 && prefix.equals(next.prefix)
                    && pad(next.number, width).equals(next.digits);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Hostlist other && hosts.equals(other.hosts);
    }

    @Override
    public int hashCode() {
        return hosts.hashCode();
    }
}
