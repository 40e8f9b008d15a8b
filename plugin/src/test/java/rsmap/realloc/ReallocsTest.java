// Reallocs.continueAfter: after a restart the next alloc_id is above the last one a journal
// recorded, and never goes back.
package rsmap.realloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import rsmap.Fixtures;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Grant;
import rsmap.alloc.JobSpec;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;

class ReallocsTest {
    @Test
    void continueAfter_lastAllocId_nextAnswerIsTheOneAfter() throws ParseException {
        Reallocs re = reallocs();
        re.continueAfter(41);
        assertThat(grow(re, "a")).isEqualTo(42);
        assertThat(grow(re, "b")).isEqualTo(43);
    }

    @Test
    void continueAfter_belowWhatWasAnswered_neverLowersIt() throws ParseException {
        Reallocs re = reallocs();
        re.continueAfter(10);
        assertThat(grow(re, "a")).isEqualTo(11);
        re.continueAfter(3);
        re.continueAfter(11);
        assertThat(grow(re, "b")).isEqualTo(12);
        assertThat(re.refuse("7", "c", "why").allocId()).as("every answer type counts").isEqualTo(13);
    }

    @Test
    void continueAfter_none_startsAtOne() throws ParseException {
        Reallocs re = reallocs();
        re.continueAfter(0);
        assertThat(grow(re, "a")).isEqualTo(1);
    }

    @Test
    void continueAfter_negativeOrLast_refused() throws ParseException {
        Reallocs re = reallocs();
        assertThatThrownBy(() -> re.continueAfter(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not -1");
        assertThatThrownBy(() -> re.continueAfter(Long.MAX_VALUE)).isInstanceOf(IllegalArgumentException.class);
        re.continueAfter(Long.MAX_VALUE - 1);
        assertThat(grow(re, "a")).isEqualTo(Long.MAX_VALUE);
    }

    /** A realloc of job 7 that adds one instance; its alloc_id. */
    private static long grow(Reallocs re, String tag) throws ParseException {
        Outcome o = re.realloc(new Realloc("7", tag, Optional.of(RequestList.parse("gpu=1", Fixtures.TABLE)),
                Optional.empty(), Grant.NONE), 0);
        return o.answer().orElseThrow().allocId();
    }

    private static Reallocs reallocs() throws ParseException {
        Cluster c = new Cluster(Fixtures.TABLE);
        c.configure("node01", ComplexValues.parse("gpu=8(0-7)", Fixtures.TABLE), 0);
        c.submit(new JobSpec("7", RequestList.parse("gpu=1", Fixtures.TABLE), Map.of("node01", 1), "node01",
                JobSpec.UNLIMITED, Optional.empty(), false), 0);
        return new Reallocs(c);
    }
}
