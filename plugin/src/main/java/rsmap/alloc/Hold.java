// A time-bounded claim on instances of a pool: an advance reservation, or a waiting job's reserved start.
package rsmap.alloc;

/**
 * Instances {@code indices} of a pool claimed by {@code owner} over {@code [start, end)}.
 *
 * @param end Long.MAX_VALUE for a claim without end (a job of unlimited run time)
 */
record Hold(Kind kind, String owner, long start, long end, int[] indices) {
    enum Kind {
        /** An advance reservation: jobs inside it are granted from these instances only. */
        AR,
        /** The reserved start of a waiting job with resource reservation (-R y). */
        JOB
    }

    boolean overlaps(long from, long to) {
        return start < to && from < end;
    }

    boolean covers(int index) {
        for (int i : indices) {
            if (i == index) {
                return true;
            }
        }
        return false;
    }
}
