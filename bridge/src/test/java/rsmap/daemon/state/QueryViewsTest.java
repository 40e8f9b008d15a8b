// QUERY's kept views: one per viewer, bounded in number and size (a host of 10,000 instances answers about
// a megabyte per view, in a daemon of 64 MiB), all dropped together.
package rsmap.daemon.state;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class QueryViewsTest {
    @Test
    void users_pastTheirNumber_areNotKept_andKeptOnesAreReplaced() {
        QueryViews v = new QueryViews();
        for (int i = 0; i < QueryViews.USERS + 1; i++) {
            v.put("u" + i, "{" + i + "}");
        }
        assertThat(v.get("u0")).isEqualTo("{0}");
        assertThat(v.get("u" + QueryViews.USERS)).as("one user too many").isNull();
        v.put("u0", "{again}");
        assertThat(v.get("u0")).as("a kept user's view is replaced, even when full").isEqualTo("{again}");
        v.put(null, "{root}");
        assertThat(v.get(null)).as("root's and the admin's view is never refused").isEqualTo("{root}");
        v.put("", "{}");
        assertThat(v.get("")).as("a peer without a name").isNull();
    }

    @Test
    void usersViews_pastTheirSize_areNotKept_untilTheNextChange() {
        QueryViews v = new QueryViews();
        String big = "x".repeat((int) (QueryViews.USER_CHARS / 2));
        v.put("alice", big);
        v.put("bob", big);
        v.put("carol", "{}");
        assertThat(v.get("bob")).isEqualTo(big);
        assertThat(v.get("carol")).as("past the size of all views together").isNull();
        v.put("bob", "{}");
        v.put("carol", "{}");
        assertThat(v.get("carol")).as("bob's smaller view made room").isEqualTo("{}");
        v.clear();
        assertThat(v.get("alice")).isNull();
        assertThat(v.get(null)).isNull();
        v.put("dave", big + big);
        assertThat(v.get("dave")).as("the sizes were forgotten with the views").isEqualTo(big + big);
    }
}
