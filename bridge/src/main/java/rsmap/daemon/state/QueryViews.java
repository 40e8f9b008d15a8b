// QUERY's whole answer as each viewer last got it, kept until the state changes: root and the admin share
// one, each other user has its own (their view masks other users' jobs), bounded in number and in size.
package rsmap.daemon.state;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Written under the daemon's lock (by QUERY, and emptied by every change of the state); read without it
 * (Commands#quick, on the selector thread): a value read is the state of one moment between two changes.
 */
final class QueryViews {
    /** Users whose views are kept at once; past it, the others' QUERYs are built each time (nothing evicted). */
    static final int USERS = 64;
    /** Characters of all users' views together: on a host of 10,000 instances one view is about a megabyte. */
    static final long USER_CHARS = 4L << 20;

    /** Root's and the admin's view, null when stale. */
    private volatile String privileged;
    private final Map<String, String> users = new ConcurrentHashMap<>();
    /** The characters in {@code users}; under the daemon's lock. */
    private long userChars;

    /** {@code user}'s view (null: root and the admin), or null when stale or not kept. */
    String get(String user) {
        return user == null ? privileged : users.get(user);
    }

    /** Keeps {@code text} as {@code user}'s view (null: root and the admin), within the bounds above. */
    void put(String user, String text) {
        if (user == null) {
            privileged = text;
            return;
        }
        String before = users.get(user);
        long chars = userChars - (before == null ? 0 : before.length()) + text.length();
        if (!user.isEmpty() && (before != null || users.size() < USERS) && chars <= USER_CHARS) {
            users.put(user, text);
            userChars = chars;
        }
    }

    /** The state changed: every view is stale. */
    void clear() {
        privileged = null;
        users.clear();
        userChars = 0;
    }
}
