// A version such as a kernel release, 6.5.2 or 6.5.0-14-generic, compared component by component.
package rsmap.node;

import java.util.Arrays;
import rsmap.ParseException;

/**
 * <pre>
 * version := digits ('.' digits)* [suffix]
 * suffix  := ('-' | '+' | '_' | '~') any characters
 * </pre>
 * Components compare as whole numbers ({@code 6.10 > 6.9}, {@code 6.5.2 < 6.5.10}); a missing component
 * counts as 0 ({@code 6.5 == 6.5.0}). The suffix a distribution adds ({@code -14-generic}) is kept as
 * written but does not take part: {@code 6.5.2-1-generic == 6.5.2}, so "not 6.5.2" also keeps a host
 * running a distribution's build of 6.5.2 away (use case 4). Equal when written alike;
 * {@link #compare} compares versions.
 */
public final class Version implements AttributeValue {
    static final int MAX_CHARS = 256;
    static final int MAX_COMPONENTS = 32;
    /** 18 digits always fit a long. */
    static final int MAX_COMPONENT_DIGITS = 18;

    private final String text;
    private final long[] components;

    private Version(String text, long[] components) {
        this.text = text;
        this.components = components;
    }

    public static Version parse(String s) throws ParseException {
        int n = s.length();
        if (n > MAX_CHARS) {
            throw new ParseException("version longer than " + MAX_CHARS + " characters", s, 0);
        }
        long[] parts = new long[MAX_COMPONENTS];
        int count = 0;
        int i = 0;
        while (true) {
            int start = i;
            while (i < n && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                i++;
            }
            if (i == start) {
                throw new ParseException(i == n && count == 0 ? "empty version"
                        : "'" + s + "' is not a version (numbers separated by '.', e.g. 6.5.2)", s, i);
            }
            if (i - start > MAX_COMPONENT_DIGITS) {
                throw new ParseException("version component longer than " + MAX_COMPONENT_DIGITS + " digits", s,
                        start);
            }
            if (count == MAX_COMPONENTS) {
                throw new ParseException("version with more than " + MAX_COMPONENTS + " components", s, start);
            }
            parts[count++] = Long.parseLong(s.substring(start, i));
            if (i < n && s.charAt(i) == '.') {
                i++;
                continue;
            }
            break;
        }
        if (i < n && "-+_~".indexOf(s.charAt(i)) < 0) {
            throw new ParseException("unexpected '" + s.charAt(i) + "' in version '" + s
                    + "' (a suffix starts with -, +, _ or ~)", s, i);
        }
        while (count > 1 && parts[count - 1] == 0) {
            count--; // 6.5.0 is 6.5: trailing zeros do not count
        }
        return new Version(s, Arrays.copyOf(parts, count));
    }

    /** Negative, zero or positive as this version is older than, the same as or newer than {@code other}. */
    public int compare(Version other) {
        int n = Math.max(components.length, other.components.length);
        for (int i = 0; i < n; i++) {
            long a = i < components.length ? components[i] : 0;
            long b = i < other.components.length ? other.components[i] : 0;
            if (a != b) {
                return Long.compare(a, b);
            }
        }
        return 0;
    }

    @Override
    public AttributeType type() {
        return AttributeType.VERSION;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Version && ((Version) o).text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    /** As written. */
    @Override
    public String toString() {
        return text;
    }
}
