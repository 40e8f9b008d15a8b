// The bounds every parser enforces against hostile input, in one place (STYLE: one limits record).
package rsmap;

/**
 * Limits applied by the parsers. Each is checked before anything is allocated for it.
 *
 * @param maxInputChars       longest text a parser accepts (a host value, a request, a complex table)
 * @param maxInstances        most instances one resource map may list, ranges expanded
 * @param maxRsmapIds         most ids the short form {@code gpu=N} may create: MAX_RSMAP_IDS of the
 *                            seed (default 512); 0 rejects the short form altogether
 * @param maxExpressionDepth  deepest nesting of brackets and {@code !} in an expression (a filter's
 *                            parentheses and {@code !} too)
 * @param maxTokenChars       longest identifier, name or value (a filter's literal too)
 * @param maxFilterChars      longest node filter: a filter travels with every job
 * @param maxFilterTerms      most comparisons and list items in one node filter, so that evaluating
 *                            it on every host of a cluster stays bounded
 */
public record Limits(int maxInputChars, int maxInstances, int maxRsmapIds, int maxExpressionDepth,
                     int maxTokenChars, int maxFilterChars, int maxFilterTerms) {

    /** MAX_RSMAP_IDS when qmaster_params does not set it (Grid Engine's RSMAP manual, "The short form"). */
    public static final int DEFAULT_MAX_RSMAP_IDS = 512;
    /** 64 KiB of filter: far beyond any hand-written one, small enough to evaluate per host. */
    public static final int DEFAULT_MAX_FILTER_CHARS = 65_536;
    public static final int DEFAULT_MAX_FILTER_TERMS = 1_024;

    public static final Limits DEFAULT = new Limits(4 << 20, 65_536, DEFAULT_MAX_RSMAP_IDS, 64, 4096);

    public Limits {
        if (maxInputChars < 1 || maxInstances < 1 || maxRsmapIds < 0 || maxExpressionDepth < 1
                || maxTokenChars < 1 || maxFilterChars < 1 || maxFilterTerms < 1) {
            throw new IllegalArgumentException("limits must be positive (maxRsmapIds may be 0)");
        }
    }

    /** The limits of the language before node filters, with the filters' defaults. */
    public Limits(int maxInputChars, int maxInstances, int maxRsmapIds, int maxExpressionDepth, int maxTokenChars) {
        this(maxInputChars, maxInstances, maxRsmapIds, maxExpressionDepth, maxTokenChars, DEFAULT_MAX_FILTER_CHARS,
                DEFAULT_MAX_FILTER_TERMS);
    }

    /** These limits with another MAX_RSMAP_IDS. */
    public Limits withMaxRsmapIds(int ids) {
        return new Limits(maxInputChars, maxInstances, ids, maxExpressionDepth, maxTokenChars, maxFilterChars,
                maxFilterTerms);
    }

    /** These limits with other bounds for node filters. */
    public Limits withFilterBounds(int chars, int terms) {
        return new Limits(maxInputChars, maxInstances, maxRsmapIds, maxExpressionDepth, maxTokenChars, chars, terms);
    }
}
