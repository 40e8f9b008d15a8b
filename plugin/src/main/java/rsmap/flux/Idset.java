// A set of non-negative integer ids in Flux RFC 22 form ("1-3,7-9"): ranks and instance indices in R.
// Held as sorted, disjoint, non-adjacent ranges, so "0-4294967295" costs two numbers, not four billion.
package rsmap.flux;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.PrimitiveIterator;
import java.util.stream.LongStream;
import java.util.stream.StreamSupport;
import java.util.Spliterators;
import java.util.Spliterator;
import rsmap.ParseException;

/**
 * An immutable idset. {@link #parse} accepts RFC 22 strings, {@link #toString()} prints the canonical
 * compressed form without brackets ({@code 1-3,7-9}; the empty set is {@code ""}).
 */
public final class Idset {
    /** The largest id: Flux's idsets hold unsigned 32-bit ids. */
    public static final long MAX_ID = 0xFFFF_FFFFL;
    private static final Idset EMPTY = new Idset(new long[0]);

    /** lo0, hi0, lo1, hi1, ...: lo <= hi, and hi(k) + 1 < lo(k+1) (sorted, disjoint, not adjacent). */
    private final long[] bounds;

    private Idset(long[] bounds) {
        this.bounds = bounds;
    }

    public static Idset empty() {
        return EMPTY;
    }

    /** The ids {@code lo..hi}, both included. */
    public static Idset range(long lo, long hi) {
        if (lo < 0 || hi > MAX_ID || lo > hi) {
            throw new IllegalArgumentException("not a range of ids: " + lo + "-" + hi);
        }
        return new Idset(new long[] {lo, hi});
    }

    public static Idset of(long... ids) {
        long[] sorted = ids.clone();
        Arrays.sort(sorted);
        Builder b = new Builder();
        for (long id : sorted) {
            if (id < 0 || id > MAX_ID) {
                throw new IllegalArgumentException("not an id: " + id);
            }
            b.add(id, id);
        }
        return b.build();
    }

    /**
     * Reads an RFC 22 idset: ids in ascending order without duplicates, in decimal without leading
     * zeros, consecutive ids optionally as {@code lo-hi}, the whole optionally in square brackets.
     */
    public static Idset parse(String text) throws ParseException {
        int start = 0;
        int end = text.length();
        if (end > 0 && text.charAt(0) == '[') {
            if (text.charAt(end - 1) != ']' || end == 1) {
                throw new ParseException("an idset that opens with '[' must close with ']' (RFC 22)", text, end);
            }
            start = 1;
            end--;
        }
        Builder b = new Builder();
        long previous = -1;
        int i = start;
        while (i < end) {
            int at = i;
            long lo = number(text, i, end);
            i = skipDigits(text, i, end);
            long hi = lo;
            if (i < end && text.charAt(i) == '-') {
                i++;
                int hiAt = i;
                hi = number(text, i, end);
                i = skipDigits(text, i, end);
                if (hi < lo) {
                    throw new ParseException("range " + lo + "-" + hi + " goes down; ids ascend (RFC 22)", text, hiAt);
                }
            }
            if (lo <= previous) {
                throw new ParseException("id " + lo + " is not above " + previous
                        + "; ids ascend without duplicates (RFC 22)", text, at);
            }
            b.add(lo, hi);
            previous = hi;
            if (i < end) {
                if (text.charAt(i) != ',') {
                    throw new ParseException("expected ',' or '-' after an id, found '" + text.charAt(i) + "'", text, i);
                }
                i++;
                if (i == end) {
                    throw new ParseException("expected an id after ','", text, i);
                }
            }
        }
        return b.build();
    }

    /** The decimal id at {@code i}: digits only, no leading zero (RFC 22), at most {@link #MAX_ID}. */
    private static long number(String text, int i, int end) throws ParseException {
        int j = skipDigits(text, i, end);
        if (j == i) {
            String found = i < end ? "'" + text.charAt(i) + "'" : "the end";
            throw new ParseException("expected a decimal id, found " + found, text, i);
        }
        if (text.charAt(i) == '0' && j - i > 1) {
            throw new ParseException("leading zero in id " + text.substring(i, j) + " (RFC 22)", text, i);
        }
        if (j - i > 10) {
            throw new ParseException("id " + text.substring(i, Math.min(j, i + 20)) + " is above " + MAX_ID, text, i);
        }
        long v = Long.parseLong(text, i, j, 10);
        if (v > MAX_ID) {
            throw new ParseException("id " + v + " is above " + MAX_ID, text, i);
        }
        return v;
    }

    private static int skipDigits(String text, int i, int end) {
        while (i < end && text.charAt(i) >= '0' && text.charAt(i) <= '9') {
            i++;
        }
        return i;
    }

    public boolean isEmpty() {
        return bounds.length == 0;
    }

    /** How many ids (up to 2^32, so a long). */
    public long size() {
        long n = 0;
        for (int k = 0; k < bounds.length; k += 2) {
            n += bounds[k + 1] - bounds[k] + 1;
        }
        return n;
    }

    public boolean contains(long id) {
        int lo = 0;
        int hi = bounds.length / 2 - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (id < bounds[2 * mid]) {
                hi = mid - 1;
            } else if (id > bounds[2 * mid + 1]) {
                lo = mid + 1;
            } else {
                return true;
            }
        }
        return false;
    }

    public long first() {
        if (isEmpty()) {
            throw new NoSuchElementException("empty idset");
        }
        return bounds[0];
    }

    public long last() {
        if (isEmpty()) {
            throw new NoSuchElementException("empty idset");
        }
        return bounds[bounds.length - 1];
    }

    /** The number of maximal ranges ({@code 1-3,7} has two). */
    public int rangeCount() {
        return bounds.length / 2;
    }

    /** The ids in ascending order, lazily (never materialised). */
    public LongStream ids() {
        PrimitiveIterator.OfLong it = new PrimitiveIterator.OfLong() {
            int k;
            long next = bounds.length == 0 ? 0 : bounds[0];

            @Override
            public boolean hasNext() {
                return k < bounds.length;
            }

            @Override
            public long nextLong() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                long v = next;
                if (v == bounds[k + 1]) {
                    k += 2;
                    next = k < bounds.length ? bounds[k] : 0;
                } else {
                    next = v + 1;
                }
                return v;
            }
        };
        return StreamSupport.longStream(Spliterators.spliterator(it, size(),
                Spliterator.ORDERED | Spliterator.SORTED | Spliterator.DISTINCT | Spliterator.NONNULL), false);
    }

    public boolean containsAll(Idset other) {
        return other.difference(this).isEmpty();
    }

    public Idset union(Idset other) {
        return merge(other, Op.UNION);
    }

    public Idset intersection(Idset other) {
        return merge(other, Op.INTERSECTION);
    }

    /** The ids of this set that are not in {@code other}. */
    public Idset difference(Idset other) {
        return merge(other, Op.DIFFERENCE);
    }

    private enum Op { UNION, INTERSECTION, DIFFERENCE }

    /**
     * A sweep over the boundaries of both range lists: each range contributes +1 at lo and -1 after hi;
     * the operation decides from the two coverage flags whether an id belongs to the result.
     */
    private Idset merge(Idset other, Op op) {
        long[] a = bounds;
        long[] b = other.bounds;
        Builder out = new Builder();
        int i = 0;
        int j = 0;
        long cursor = 0;
        while (cursor <= MAX_ID) {
            while (i < a.length && a[i + 1] < cursor) {
                i += 2;
            }
            while (j < b.length && b[j + 1] < cursor) {
                j += 2;
            }
            boolean inA = i < a.length && a[i] <= cursor;
            boolean inB = j < b.length && b[j] <= cursor;
            // the next id at which either coverage may change
            long next = MAX_ID + 1;
            if (i < a.length) {
                next = Math.min(next, inA ? a[i + 1] + 1 : a[i]);
            }
            if (j < b.length) {
                next = Math.min(next, inB ? b[j + 1] + 1 : b[j]);
            }
            boolean keep = switch (op) {
                case UNION -> inA || inB;
                case INTERSECTION -> inA && inB;
                case DIFFERENCE -> inA && !inB;
            };
            if (keep) {
                out.add(cursor, next - 1);
            }
            if (i >= a.length && j >= b.length) {
                break;
            }
            cursor = next;
        }
        return out.build();
    }

    /** Canonical: ascending maximal ranges, {@code lo-hi} for two ids or more, no brackets. */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        for (int k = 0; k < bounds.length; k += 2) {
            if (k > 0) {
                s.append(',');
            }
            s.append(bounds[k]);
            if (bounds[k + 1] > bounds[k]) {
                s.append('-').append(bounds[k + 1]);
            }
        }
        return s.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Idset other && Arrays.equals(bounds, other.bounds);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bounds);
    }

    /** Collects ranges given in ascending order, joining overlapping and adjacent ones. */
    static final class Builder {
        private final List<long[]> ranges = new ArrayList<>();

        /** Adds {@code lo..hi}; {@code lo} must not be below the previous range's {@code lo}. */
        Builder add(long lo, long hi) {
            if (!ranges.isEmpty()) {
                long[] last = ranges.get(ranges.size() - 1);
                if (lo <= last[1] + 1) {
                    last[1] = Math.max(last[1], hi);
                    return this;
                }
            }
            ranges.add(new long[] {lo, hi});
            return this;
        }

        Idset build() {
            if (ranges.isEmpty()) {
                return EMPTY;
            }
            long[] b = new long[ranges.size() * 2];
            for (int k = 0; k < ranges.size(); k++) {
                b[2 * k] = ranges.get(k)[0];
                b[2 * k + 1] = ranges.get(k)[1];
            }
            return new Idset(b);
        }
    }
}
