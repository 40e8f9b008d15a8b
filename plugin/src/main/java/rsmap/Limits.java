// The bounds every parser enforces against hostile input, in one place (STYLE: one limits record).
package rsmap;

/**
 * Limits applied by the parsers. Each is checked before anything is allocated for it.
 *
 * @param maxInputChars       longest text a parser accepts (a host value, a request, a complex table)
 * @param maxInstances        most instances one resource map may list, ranges expanded
 * @param maxRsmapIds         most ids the short form {@code gpu=N} may create: MAX_RSMAP_IDS of the
 *                            seed (default 512); 0 rejects the short form altogether
 * @param maxExpressionDepth  deepest nesting of brackets and {@code !} in an expression
 * @param maxTokenChars       longest identifier, name or value
 */
public record Limits(int maxInputChars, int maxInstances, int maxRsmapIds, int maxExpressionDepth,
                     int maxTokenChars) {

    /** MAX_RSMAP_IDS when qmaster_params does not set it (seed 002, "The short form"). */
    public static final int DEFAULT_MAX_RSMAP_IDS = 512;

    public static final Limits DEFAULT = new Limits(4 << 20, 65_536, DEFAULT_MAX_RSMAP_IDS, 64, 4096);

    public Limits {
        if (maxInputChars < 1 || maxInstances < 1 || maxRsmapIds < 0 || maxExpressionDepth < 1
                || maxTokenChars < 1) {
            throw new IllegalArgumentException("limits must be positive (maxRsmapIds may be 0)");
        }
    }

    /** These limits with another MAX_RSMAP_IDS. */
    public Limits withMaxRsmapIds(int ids) {
        return new Limits(maxInputChars, maxInstances, ids, maxExpressionDepth, maxTokenChars);
    }
}
