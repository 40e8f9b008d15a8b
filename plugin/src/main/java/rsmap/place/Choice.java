// What placement decided for a job with options: start now, a planned start, or neither.
package rsmap.place;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import rsmap.alloc.JobSpec;

/** {@code alternative} is the 0-based index in the user's list; {@code why} one line for the answer. */
public sealed interface Choice permits Choice.Start, Choice.Planned, Choice.None {
    enum Kind { START, PLANNED, NONE }

    Kind kind();

    String why();

    /** Start now as {@code job} (on {@code hosts}). */
    record Start(int alternative, Map<String, Integer> hosts, JobSpec job, String why) implements Choice {
        public Start {
            hosts = Collections.unmodifiableMap(new LinkedHashMap<>(hosts));
            Objects.requireNonNull(job);
            Objects.requireNonNull(why);
        }

        @Override
        public Kind kind() {
            return Kind.START;
        }
    }

    /** Nothing can start now; the earliest way starts at {@code start} as {@code job}. */
    record Planned(long start, int alternative, Map<String, Integer> hosts, JobSpec job, String why)
            implements Choice {
        public Planned {
            hosts = Collections.unmodifiableMap(new LinkedHashMap<>(hosts));
            Objects.requireNonNull(job);
            Objects.requireNonNull(why);
        }

        @Override
        public Kind kind() {
            return Kind.PLANNED;
        }
    }

    /** Nothing can start now (and nothing was planned, or planning was not asked for). */
    record None(String why) implements Choice {
        public None {
            Objects.requireNonNull(why);
        }

        @Override
        public Kind kind() {
            return Kind.NONE;
        }
    }
}
