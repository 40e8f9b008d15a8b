// The names every job start checks (host, user, job, task), as plain character loops: a regular expression
// here cost each JOB_START several matchers and, under full tiered compilation, a compile that raised the
// daemon's RSS by 26 MiB (docs/benchmarks.md).
package rsmap.daemon.config;

/**
 * Each method accepts exactly what its pattern says (NamesTest checks them against the patterns on random
 * text). A name is ASCII only: no control character, no space, nothing a cgroup, a unit, a log line or a
 * {@code SGE_HGR_} value could be confused by.
 */
public final class Names {
    private Names() {
    }

    /** A host name, {@code [A-Za-z0-9_][A-Za-z0-9_.-]{0,252}}. */
    public static boolean host(String s) {
        int n = s.length();
        if (n < 1 || n > 253 || !(alnum(s.charAt(0)) || s.charAt(0) == '_')) {
            return false;
        }
        for (int i = 1; i < n; i++) {
            char c = s.charAt(i);
            if (!(alnum(c) || c == '_' || c == '.' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    /** A user name as rsmapd.conf and JOB_START take it, {@code [A-Za-z0-9_.][A-Za-z0-9_.@$-]{0,63}}. */
    public static boolean user(String s) {
        int n = s.length();
        if (n < 1 || n > 64 || !(alnum(s.charAt(0)) || s.charAt(0) == '_' || s.charAt(0) == '.')) {
            return false;
        }
        for (int i = 1; i < n; i++) {
            char c = s.charAt(i);
            if (!(alnum(c) || c == '_' || c == '.' || c == '@' || c == '$' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    /** execd's job number or a scheduler's job name, {@code [A-Za-z0-9_+-]{1,100}}. */
    public static boolean job(String s) {
        return job(s, 0, s.length());
    }

    /** {@code s[from, to)} is a job name. */
    public static boolean job(String s, int from, int to) {
        if (to - from < 1 || to - from > 100) {
            return false;
        }
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (!(alnum(c) || c == '_' || c == '+' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    /** An array task's number, {@code [0-9]{1,10}}. */
    public static boolean task(String s) {
        return task(s, 0, s.length());
    }

    /** {@code s[from, to)} is a task number. */
    public static boolean task(String s, int from, int to) {
        if (to - from < 1 || to - from > 10) {
            return false;
        }
        for (int i = from; i < to; i++) {
            if (!digit(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean alnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || digit(c);
    }

    private static boolean digit(char c) {
        return c >= '0' && c <= '9';
    }
}
