// The answer of JOB_START, JOB_ENTER and RELEASE: STATE {job, user, grants, env}, then the environment again as
// NAME=value lines (docs/protocol.md), which the C hooks read instead of the JSON.
package rsmap.daemon.job;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import rsmap.daemon.state.Job;
import rsmap.wire.Code;
import rsmap.wire.Frame;

public final class JobAnswer {
    private JobAnswer() {
    }

    /** STATE with the job and its own environment's lines. */
    public static Frame of(long tid, Job job) {
        return of(tid, job, job.env());
    }

    /** The same with the lines of {@code env}: the job's own and what JOB_ENTER adds for the starter only. */
    public static Frame of(long tid, Job job, Map<String, String> env) {
        List<String> args = new ArrayList<>();
        args.add(Views.jobText(job));
        env.forEach((k, v) -> args.add(k + "=" + v));
        return Frame.of(tid, Code.STATE.value(), args.toArray(new String[0]));
    }
}
